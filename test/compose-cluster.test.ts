// docker-compose.cluster.yml cannot run here (no Docker engine), so this checks what can be checked: the
// images are docker-compose.yml's (infra/versions.env's versions); every Tally service's settings are ones the
// config schema knows, and load, with the example secrets, into the cluster the ClickHouse configuration
// (deploy/cluster) describes; the shards and replicas of remote_servers are the servers' macros and the
// compose services; Keeper has three nodes; Kafka three brokers with topics replicated three times; every
// service has a health check; no password is in an environment; scaled services have no fixed name, host
// port or shared volume.
import { existsSync, readFileSync } from 'node:fs';
import { isSettingName, loadConfig } from '@tally/config';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from './support/processes.ts';

interface ComposeService {
  image?: string;
  build?: string;
  hostname?: string;
  container_name?: string;
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  ports?: (string | number)[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  secrets?: string[];
}
interface Compose {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
  volumes: Record<string, unknown>;
}
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const cluster = parse(read('docker-compose.cluster.yml'), { merge: true }) as Compose;
const single = parse(read('docker-compose.yml'), { merge: true }) as Compose;
const service = (name: string) => cluster.services[name] as ComposeService;
const versions = Object.fromEntries(
  read('infra/versions.env')
    .split('\n')
    .filter((l) => /^[A-Z0-9_]+=/.test(l))
    .map((l) => l.split('=') as [string, string]),
);
const TALLY = ['gateway', 'analytics-consumer', 'revenue-consumer', 'dashboard'];
const SCALED = TALLY;
const names = Object.keys(cluster.services);
const servicesNamed = (prefix: string) => names.filter((n) => n.startsWith(prefix));

/** The inner text of each `<tag>…</tag>` of an XML text of ours (no nesting of a tag in itself). */
const elements = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => (m[1] as string).trim());
/**
 * A command as the container gets it: Compose turns `$$` into `$`, and would fill a lone `$NAME` from the
 * host's environment (which none of these commands means to do).
 */
function asRun(words: readonly string[] = []): string {
  const text = words.join(' ');
  expect(text.replaceAll('$$', '')).not.toContain('$');
  return text.replaceAll('$$', '$');
}
/** The host file a service mounts at `target`. */
const mounted = (s: ComposeService, target: string) =>
  s.volumes
    ?.find((v) => v.split(':')[1] === target)
    ?.split(':')[0]
    ?.replace(/^\.\//, '');

/** A Tally service's settings, its secrets' files read from the committed examples. */
function configOf(name: string) {
  const env = { ...service(name).environment };
  for (const [key, value] of Object.entries(env)) {
    if (!key.endsWith('_FILE')) continue;
    const secret = /^\/run\/secrets\/(\w+)$/.exec(value)?.[1] as string;
    expect(service(name).secrets, `${name} reads secret ${secret}`).toContain(secret);
    env[key] = `${ROOT}deploy/cluster/secrets.example/${secret}`;
  }
  return loadConfig({ ...env, TALLY_ENV_FILE: undefined });
}

const clusterXml = read('deploy/cluster/clickhouse/config.d/cluster.xml');
const remoteServers = elements(clusterXml, 'remote_servers')[0] as string;
const clusterName = /^<(\w+)>/.exec(remoteServers)?.[1];
const shards = elements(remoteServers, 'shard').map((shard) => elements(shard, 'host'));

describe('docker-compose.cluster.yml', () => {
  it("runs docker-compose.yml's images, at infra/versions.env's versions", () => {
    const image = (name: string) => single.services[name]?.image;
    expect(image('kafka')).toBe(`apache/kafka:${versions.KAFKA_VERSION}`);
    expect(image('redis')).toBe(`redis:${versions.REDIS_VERSION}-bookworm`);
    expect(image('schema-registry')).toBe(
      `apicurio/apicurio-registry-sql:${versions.APICURIO_REGISTRY_VERSION}`,
    );
    for (const name of servicesNamed('kafka-')) expect(service(name).image, name).toBe(image('kafka'));
    for (const name of [...servicesNamed('clickhouse-'), ...servicesNamed('keeper-')]) {
      expect(service(name).image, name).toBe(image('clickhouse'));
    }
    expect(service('redis').image).toBe(image('redis'));
    expect(service('schema-registry').image).toBe(image('schema-registry'));
    for (const name of TALLY) expect(service(name).image, name).toBe(single.services.gateway?.image);
    expect(service('gateway').build).toBe('.');
  });

  it('gives Tally services only settings the code knows, which load into the cluster deploy/cluster describes', () => {
    for (const name of TALLY) {
      for (const key of Object.keys(service(name).environment ?? {})) {
        expect(isSettingName(key), `${name}: unknown setting ${key}`).toBe(true);
      }
      const config = configOf(name);
      expect(config.KAFKA_BROKERS?.split(',').map((b) => b.split(':')[0])).toEqual(servicesNamed('kafka-'));
      expect(config.KAFKA_REPLICATION_FACTOR, name).toBe(3);
      if (name === 'gateway') {
        expect(config.CLICKHOUSE_URL).toBeUndefined();
        continue;
      }
      expect(config.CLICKHOUSE_CLUSTER, name).toBe(clusterName);
      const url = new URL(config.CLICKHOUSE_URL ?? '');
      expect(shards.flat(), name).toContain(url.hostname);
      expect(service(name).depends_on?.[url.hostname]?.condition, `${name} → ${url.hostname}`).toBe(
        'service_healthy',
      );
      expect([url.username, decodeURIComponent(url.password)]).toEqual([
        service(url.hostname).environment?.CLICKHOUSE_USER,
        read('deploy/cluster/secrets.example/clickhouse_password').trim(),
      ]);
    }
    for (const name of ['gateway', 'dashboard']) {
      const redis = new URL(configOf(name).REDIS_URL ?? '');
      expect([redis.host, decodeURIComponent(redis.password)]).toEqual([
        'redis:6379',
        read('deploy/cluster/secrets.example/redis_password').trim(),
      ]);
    }
    for (const name of ['analytics-consumer', 'revenue-consumer']) {
      expect(service(name).command).toEqual(['node', `services/${name}/dist/main.js`]);
    }
  });

  it('has 2 shards of 2 replicas, each a server whose macros name its shard and replica', () => {
    expect(clusterName).toBe('tally_cluster');
    expect(shards.map((replicas) => replicas.length)).toEqual([2, 2]);
    expect(shards.flat().sort()).toEqual(servicesNamed('clickhouse-').sort());
    expect(elements(remoteServers, 'internal_replication')).toEqual(['true', 'true']);
    shards.forEach((replicas, at) => {
      for (const host of replicas) {
        const node = service(host);
        expect(node.hostname).toBe(host);
        expect(mounted(node, '/etc/clickhouse-server/config.d/cluster.xml')).toBe(
          'deploy/cluster/clickhouse/config.d/cluster.xml',
        );
        const macros = read(mounted(node, '/etc/clickhouse-server/config.d/macros.xml') as string);
        expect([
          elements(macros, 'cluster'),
          elements(macros, 'shard').map(Number),
          elements(macros, 'replica'),
        ]).toEqual([[clusterName], [at + 1], [host]]);
        expect(mounted(node, `/var/lib/clickhouse`)).toBe(`${host}-data`);
      }
    });
    // Between shards the servers log in as the user the entrypoint creates, with the secret's password.
    expect(new Set(elements(remoteServers, 'user'))).toEqual(new Set(['tally']));
    expect(remoteServers.match(/<password from_env="CLICKHOUSE_PASSWORD"\/>/g)).toHaveLength(4);
  });

  it('coordinates through 3 Keeper nodes, the ensemble of their own configuration', () => {
    const keepers = servicesNamed('keeper-');
    expect(keepers).toHaveLength(3);
    expect(elements(elements(clusterXml, 'zookeeper')[0] as string, 'host')).toEqual(keepers);
    const keeperXml = read('deploy/cluster/keeper/keeper.xml');
    const raft = elements(keeperXml, 'server').map((s) => [
      Number(elements(s, 'id')[0]),
      elements(s, 'hostname')[0],
    ]);
    expect(raft).toEqual(keepers.map((k, at) => [at + 1, k]));
    for (const [id, host] of raft) {
      const keeper = service(host as string);
      expect(keeper.environment?.KEEPER_SERVER_ID).toBe(String(id));
      expect(mounted(keeper, '/etc/clickhouse-keeper/keeper.xml')).toBe('deploy/cluster/keeper/keeper.xml');
      expect(keeper.entrypoint).toContain('--config-file=/etc/clickhouse-keeper/keeper.xml');
      expect(mounted(keeper, '/var/lib/clickhouse')).toBe(`${host}-data`); // where its log and snapshots are:
    }
    for (const path of ['log_storage_path', 'snapshot_storage_path']) {
      expect(elements(keeperXml, path)[0]).toMatch(/^\/var\/lib\/clickhouse\//);
    }
    expect(elements(keeperXml, 'http_control')[0]).toContain('<port>9182</port>');
    expect(service('keeper-1').healthcheck?.test.join(' ')).toContain('127.0.0.1:9182/ready');
    for (const name of servicesNamed('clickhouse-')) {
      for (const keeper of keepers)
        expect(service(name).depends_on?.[keeper]?.condition).toBe('service_healthy');
    }
  });

  it('runs 3 Kafka brokers of one KRaft cluster, topics replicated 3 times, 2 in sync', () => {
    const brokers = servicesNamed('kafka-');
    expect(brokers).toHaveLength(3);
    const voters = brokers.map((b, at) => `${at + 1}@${b}:9093`).join(',');
    const envs = brokers.map((b) => service(b).environment ?? {});
    for (const [at, env] of envs.entries()) {
      expect(env.KAFKA_NODE_ID).toBe(String(at + 1));
      expect(env.KAFKA_ADVERTISED_LISTENERS).toBe(`PLAINTEXT://${brokers[at]}:9092`);
      expect(env.KAFKA_CONTROLLER_QUORUM_VOTERS).toBe(voters);
      expect(env.CLUSTER_ID).toBe(envs[0]?.CLUSTER_ID);
      for (const key of [
        'OFFSETS_TOPIC',
        'TRANSACTION_STATE_LOG',
        'SHARE_COORDINATOR_STATE_TOPIC',
        'DEFAULT',
      ]) {
        expect(env[`KAFKA_${key}_REPLICATION_FACTOR`], key).toBe('3');
      }
      for (const key of [
        'TRANSACTION_STATE_LOG_MIN_ISR',
        'SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR',
        'MIN_INSYNC_REPLICAS',
      ]) {
        expect(env[`KAFKA_${key}`], key).toBe('2');
      }
      expect(env.KAFKA_AUTO_CREATE_TOPICS_ENABLE).toBe(
        single.services.kafka?.environment?.KAFKA_AUTO_CREATE_TOPICS_ENABLE,
      );
      expect(mounted(service(brokers[at] as string), '/var/lib/kafka/data')).toBe(`${brokers[at]}-data`);
    }
  });

  it('keeps passwords out of every environment: Docker secrets, not committed, with committed examples', () => {
    for (const [name, s] of Object.entries(cluster.services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (/PASSWORD|SECRET|TOKEN|_KEY$|_AUTH$/.test(key)) expect(key, `${name}: ${key}`).toMatch(/_FILE$/);
        expect(String(value), `${name}: ${key}`).not.toMatch(/\/\/[^/@\s]*:[^/@\s]+@/); // no user:password@ in a URL
      }
    }
    for (const [secret, { file }] of Object.entries(cluster.secrets)) {
      expect(file).toBe(`./deploy/cluster/secrets/${secret}`);
      expect(existsSync(`${ROOT}deploy/cluster/secrets.example/${secret}`), secret).toBe(true);
    }
    expect(read('.gitignore').split('\n')).toContain('deploy/cluster/secrets/');
    // Redis reads its password from the secret on stdin, its health check through REDISCLI_AUTH.
    const redis = service('redis');
    expect(redis.secrets).toEqual(['redis_password']);
    expect(asRun(redis.command)).toMatch(
      /exec redis-server .* - <<EOF\nrequirepass \$\(cat \/run\/secrets\/redis_password\)\nEOF/,
    );
    for (const flag of ['--appendonly yes', '--appendfsync everysec']) {
      expect(single.services.redis?.command?.join(' ')).toContain(flag);
      expect(redis.command?.join(' ')).toContain(flag);
    }
    expect(asRun(redis.healthcheck?.test)).toContain(
      'REDISCLI_AUTH="$(cat /run/secrets/redis_password)" redis-cli ping',
    );
    // The ClickHouse servers' password too: from the secret into the entrypoint's environment only.
    for (const name of servicesNamed('clickhouse-')) {
      expect(service(name).secrets).toEqual(['clickhouse_password']);
      expect(asRun(service(name).entrypoint)).toContain(
        'export CLICKHOUSE_PASSWORD="$(cat /run/secrets/clickhouse_password)" && exec /entrypoint.sh',
      );
    }
  });

  it('checks the health of every service, the consumers by their admin server', () => {
    for (const name of names) expect(service(name).healthcheck?.test.length, name).toBeGreaterThan(1);
    for (const name of ['gateway', 'analytics-consumer', 'revenue-consumer']) {
      expect(service(name).healthcheck?.test.join(' '), name).toContain(
        `127.0.0.1:${configOf(name).ADMIN_PORT}/readyz`,
      );
    }
    expect(service('dashboard').healthcheck?.test.join(' ')).toContain(
      `127.0.0.1:${configOf('dashboard').DASHBOARD_PORT}/api/v1/`,
    );
  });

  it('lets the Tally services scale: no container name, host port or shared named volume', () => {
    for (const name of SCALED) {
      const s = service(name);
      expect(s.container_name, name).toBeUndefined();
      for (const port of s.ports ?? [])
        expect(String(port), `${name} publishes a fixed host port`).toMatch(/^\d+$/);
      for (const volume of s.volumes ?? [])
        expect(cluster.volumes, `${name} shares ${volume}`).not.toHaveProperty(
          volume.split(':')[0] as string,
        );
    }
    expect(service('gateway').ports).toEqual([String(configOf('gateway').PORT)]);
    expect(service('dashboard').ports).toEqual([String(configOf('dashboard').DASHBOARD_PORT)]);
    for (const name of names) expect(service(name).container_name, name).toBeUndefined();
  });
});
