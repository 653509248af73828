// docker-compose.yml cannot run here (no Docker engine), so this checks what can be checked: it parses,
// its versions and settings match infra/ (what the tests run against) and the testcontainers setup, and
// every Tally service's environment, ports and health check agree with the code's configuration.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { ConfigSchema, loadConfig } from '@tally/config';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from './support/processes.ts';

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  user?: string;
}
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const service = (name: string) => compose.services[name] as ComposeService;
const versions = Object.fromEntries(
  read('infra/versions.env')
    .split('\n')
    .filter((l) => /^[A-Z0-9_]+=/.test(l))
    .map((l) => l.split('=') as [string, string]),
);
const testSetup = read('test/setup/services.ts');
/** The TypeScript source a compiled dist/ file comes from. */
const sourceOf = (compiled: string) => compiled.replace('/dist/', '/src/').replace(/\.js$/, '.ts');
/** The server.properties that infra/kafka/start.sh writes (its first here-document). */
const serverProperties = () => /<<PROPS\n([\s\S]*?)\nPROPS/.exec(read('infra/kafka/start.sh'))?.[1] ?? '';

describe('docker-compose.yml', () => {
  it('runs the Redis version and persistence settings that infra/ runs', () => {
    const redis = service('redis');
    expect(redis.image).toBe(`redis:${versions.REDIS_VERSION}-bookworm`);
    const infraStart = read('infra/redis/start.sh');
    for (const flag of ['--appendonly yes', '--appendfsync everysec']) {
      expect(infraStart).toContain(flag);
      expect(redis.command?.join(' ')).toContain(flag);
    }
    expect(testSetup).toContain(`'${redis.image}'`);
  });

  it('runs the Kafka version and broker settings that infra/kafka runs', () => {
    const kafka = service('kafka');
    expect(kafka.image).toBe(`apache/kafka:${versions.KAFKA_VERSION}`);
    expect(read('infra/kafka/pom.xml')).toContain(`<kafka.version>${versions.KAFKA_VERSION}</kafka.version>`);
    expect(testSetup).toContain(`'${kafka.image}'`);
    // Every broker property infra/kafka/start.sh sets that is not about addresses or paths, as KAFKA_* env.
    const properties = Object.fromEntries(
      [...serverProperties().matchAll(/^([a-z][a-z.]+)=(.*)$/gm)].map((m) => [
        m[1] as string,
        m[2] as string,
      ]),
    );
    const local = /listeners|quorum|log\.dirs/;
    const env = kafka.environment ?? {};
    for (const [key, value] of Object.entries(properties)) {
      if (local.test(key)) continue;
      expect(env[`KAFKA_${key.toUpperCase().replaceAll('.', '_')}`], key).toBe(value);
    }
    expect(env.CLUSTER_ID).toBe(/cluster_id="([^"]+)"/.exec(read('infra/kafka/start.sh'))?.[1]);
  });

  it('runs the schema registry that infra/schema-registry runs, with the same storage', () => {
    const registry = service('schema-registry');
    expect(registry.image).toBe(`apicurio/apicurio-registry-sql:${versions.APICURIO_REGISTRY_VERSION}`);
    expect(read('infra/schema-registry/pom.xml')).toContain(
      `<apicurio.version>${versions.APICURIO_REGISTRY_VERSION}</apicurio.version>`,
    );
    expect(testSetup).toContain(`'${registry.image}'`);
    expect(registry.environment?.REGISTRY_DATASOURCE_URL).toMatch(/^jdbc:h2:file:/);
    expect(read('infra/schema-registry/start.sh')).toContain('REGISTRY_DATASOURCE_URL="jdbc:h2:file:');
  });

  it('gives Tally services only settings the code knows, with values its config schema accepts', () => {
    const known = Object.keys(ConfigSchema.properties);
    for (const name of ['gateway', 'analytics-consumer', 'revenue-consumer']) {
      const env = service(name).environment ?? {};
      for (const key of Object.keys(env)) expect(known, `${name}: unknown setting ${key}`).toContain(key);
      const config = loadConfig(env);
      expect(config.KAFKA_BROKERS, name).toBe('kafka:9092');
      expect(config.SCHEMA_REGISTRY_URL, name).toBe('http://schema-registry:8080/apis/ccompat/v7');
      expect(new URL(config.CLICKHOUSE_URL ?? '').host, name).toBe('clickhouse:8123');
      for (const dependency of ['kafka', 'schema-registry']) {
        expect(service(name).depends_on?.[dependency]?.condition, `${name} → ${dependency}`).toBe(
          'service_healthy',
        );
      }
    }
    for (const name of ['analytics-consumer', 'revenue-consumer']) {
      const command = service(name).command ?? [];
      expect(command, name).toEqual(['node', `services/${name}/dist/main.js`]); // compiled, as the image's
      expect(read(sourceOf(command[1] as string))).toContain('runConsumerProcess'); // which opens the log the config names:
      expect(read('packages/consumer/src/consumer-process.ts')).toContain('openRecordLog(config');
      expect(service(name).image).toBe(service('gateway').image);
    }
  });

  it('runs the dashboard against ClickHouse, its state in Redis, on its own published port', () => {
    const dashboard = service('dashboard');
    const env = dashboard.environment ?? {};
    const known = Object.keys(ConfigSchema.properties);
    for (const key of Object.keys(env)) expect(known, `dashboard: unknown setting ${key}`).toContain(key);
    const config = loadConfig(env);
    expect(new URL(config.CLICKHOUSE_URL ?? '').host).toBe('clickhouse:8123');
    expect(config.REDIS_URL).toBe('redis://redis:6379');
    expect(dashboard.ports).toEqual([`${config.DASHBOARD_PORT}:${config.DASHBOARD_PORT}`]);
    expect(config.DASHBOARD_PORT).not.toBe(loadConfig(service('gateway').environment ?? {}).PORT);
    expect(read(dashboard.command?.at(-1) as string)).toContain('startDashboard');
    expect(dashboard.image).toBe(service('gateway').image);
    expect(dashboard.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${config.DASHBOARD_PORT}/api/v1/`);
    for (const dependency of ['redis', 'clickhouse']) {
      expect(dashboard.depends_on?.[dependency]?.condition).toBe('service_healthy');
    }
  });

  it('publishes the gateway port only, and checks readiness on the admin port', () => {
    const gateway = service('gateway');
    const config = loadConfig(gateway.environment ?? {});
    expect(gateway.ports).toEqual([`${config.PORT}:${config.PORT}`]);
    expect(gateway.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${config.ADMIN_PORT}/readyz`);
    expect(config.REDIS_URL).toBe('redis://redis:6379');
    expect(gateway.depends_on?.redis?.condition).toBe('service_healthy');
  });

  it('keeps every stateful service on a named volume', () => {
    for (const [name, path] of [
      ['kafka', '/var/lib/kafka/data'],
      ['schema-registry', '/data'],
      ['redis', '/data'],
      ['clickhouse', '/var/lib/clickhouse'],
      ['gateway', '/data'],
    ] as const) {
      const volume = service(name).volumes?.find((v) => v.endsWith(`:${path}`));
      expect(volume, name).toBeDefined();
      expect(compose.volumes).toHaveProperty(volume?.split(':')[0] as string);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  // The workspaces under packages/* and services/*, and those the root package.json names one by one
  // (services/dashboard/web).
  const named = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces.filter(
    (entry) => !entry.includes('*'),
  );
  const workspaces = [
    ...['packages', 'services'].flatMap((dir) =>
      readdirSync(`${ROOT}${dir}`, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${dir}/${entry.name}`),
    ),
    ...named,
  ];
  const stage = (name: string) =>
    new RegExp(`^FROM [^\\n]* AS ${name}\\n([\\s\\S]*?)(?=^FROM |(?![\\s\\S]))`, 'm').exec(dockerfile)?.[1] ??
    '';

  it('runs on the Node.js LTS release that CI runs the whole suite on (infra/versions.env)', () => {
    const major = versions.NODE_IMAGE_MAJOR as string;
    expect(['22', '24', '26']).toContain(major);
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms[0]).toBe(`node:${versions[`NODE_${major}_VERSION`]}-bookworm-slim`);
    expect(froms.slice(1).every((from) => from === 'manifests')).toBe(true);
  });

  it("copies every workspace's manifest and the CLI's bin/ before npm ci, so that all of them are linked", () => {
    const copied = [...stage('manifests').matchAll(/^COPY (\S+)\/package\.json \1\/$/gm)].map((m) => m[1]);
    expect(copied.sort()).toEqual(workspaces.sort());
    expect(stage('manifests')).toContain('COPY packages/cli/bin packages/cli/bin');
    expect(stage('runtime')).toMatch(/RUN npm ci --omit=dev /);
  });

  it("runs as the unprivileged user node, its data directory (the volumes of compose) that user's alone", () => {
    const runtime = stage('runtime');
    const users = [...runtime.matchAll(/^USER (\S+)$/gm)].map((m) => m[1]);
    expect(users).toEqual(['node']); // one USER, not root, before the command
    expect(runtime.indexOf('USER node')).toBeLessThan(runtime.indexOf('CMD '));
    const dataDir = /^ENV .*\bTALLY_DATA_DIR=(\S+)/m.exec(runtime)?.[1];
    expect(dataDir).toBe('/data');
    expect(runtime).toContain(`RUN install -d -o node -g node -m 0700 ${dataDir}`);
    // Every Tally service (built from this image) keeps its data in that directory, and mounts its volume there.
    for (const [name, svc] of Object.entries(compose.services)) {
      if (svc.image !== 'tally:latest') continue;
      expect(svc.environment?.TALLY_DATA_DIR, name).toBe(dataDir);
      expect(svc.user, name).toBeUndefined(); // the image's user, never root by override
      for (const volume of svc.volumes ?? []) expect(volume.split(':')[1], name).toBe(dataDir);
    }
  });

  it('runs the compiled gateway, with only compiled code and the schemas from the build', () => {
    const cmd = JSON.parse(/^CMD (.*)$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    // V8's young generation set for the gateway (the Dockerfile's comment; bench/lib/stack.ts starts it so).
    expect(cmd).toEqual(['node', '--max-semi-space-size=8', 'services/gateway/dist/main.js']);
    expect(existsSync(`${ROOT}${sourceOf(cmd.at(-1) as string)}`)).toBe(true);
    const copies = [...stage('runtime').matchAll(/^COPY (.*)$/gm)].map((m) => m[1]);
    expect(copies).toEqual(['--from=build /out/ ./', 'schemas schemas']);
    expect(stage('build')).toMatch(/^RUN npm run build$/m);
  });
});
