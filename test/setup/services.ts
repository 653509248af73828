// Global setup of the integration tests: finds each real service the tests need, in this order:
//   1. an endpoint given in the environment (REDIS_URL=…), used as it is;
//   2. a container through testcontainers, when a Docker engine is reachable;
//   3. the native service from infra/ (installed from Debian's packages and started on 127.0.0.1).
// ClickHouse: CLICKHOUSE_URL when set (a real server); else ClickHouse's HTTP interface served over chDB
// by packages/warehouse-http/scripts/serve-clickhouse-http.ts on 127.0.0.1 (the same engine, in-process).
// Kafka and the schema registry: KAFKA_BROKERS and SCHEMA_REGISTRY_URL when both are set; else containers;
// else infra/kafka (Apache Kafka 4 in KRaft mode, jars from Maven Central) and infra/schema-registry
// (Apicurio Registry, which serves the Confluent API).
// Mail: MAILPIT_SMTP_URL and MAILPIT_URL (its HTTP API) when both are set; else infra/mailpit.
// Endpoints reach the tests through vitest's provide/inject. What this setup started, it stops.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { kill, startWarehouseServer } from '../support/warehouse-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    clickhouseUrl: string;
    kafkaBrokers: string;
    schemaRegistryUrl: string;
    stripeMockUrl: string;
    /** Mailpit's SMTP server (`smtp://127.0.0.1:11025`) and its HTTP API (`http://127.0.0.1:18025`). */
    mailpitSmtpUrl: string;
    mailpitUrl: string;
  }
}

const run = promisify(execFile);
const INFRA = fileURLToPath(new URL('../../infra/', import.meta.url));
const REDIS_IMAGE = 'redis:7.0.15-bookworm'; // the version Debian's redis-server has, and docker-compose.yml pins
// The versions infra/ runs natively (infra/versions.env), as images; test/compose.test.ts checks they agree.
const KAFKA_IMAGE = 'apache/kafka:4.3.1';
const SCHEMA_REGISTRY_IMAGE = 'apicurio/apicurio-registry-sql:2.4.2.Final';

type Stop = () => Promise<void>;

function dockerReachable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

/** Runs an infra/ script and returns the value of the KEY=value on its last line. */
async function infraScript(script: string, key: string): Promise<string> {
  try {
    const { stdout } = await run('bash', [`${INFRA}${script}`], { timeout: 300_000 });
    const last = stdout.trim().split('\n').at(-1) ?? '';
    if (!last.startsWith(`${key}=`)) throw new Error(`unexpected output: ${last}`);
    return last.slice(key.length + 1);
  } catch (error) {
    throw new Error(
      `Could not start the native service with infra/${script} (${(error as Error).message}). ` +
        `Set ${key} to a running service, or run infra/install.sh and infra/start.sh yourself.`,
    );
  }
}

async function redisRunning(url: string): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {}); // not running yet: that is what this asks
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function ensureRedis(stops: Stop[]): Promise<string> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  if (dockerReachable()) {
    try {
      const { RedisContainer } = await import('@testcontainers/redis');
      const container = await new RedisContainer(REDIS_IMAGE)
        .withCommand(['redis-server', '--appendonly', 'yes'])
        .start();
      stops.push(async () => {
        await container.stop();
      });
      return container.getConnectionUrl();
    } catch (error) {
      console.warn(
        `testcontainers could not start Redis (${(error as Error).message}); using infra/ instead`,
      );
    }
  }
  const port = process.env.REDIS_PORT ?? '16379';
  const wasRunning = await redisRunning(`redis://127.0.0.1:${port}`);
  const url = await infraScript('redis/start.sh', 'REDIS_URL');
  if (!wasRunning) stops.push(async () => void (await run('bash', [`${INFRA}redis/stop.sh`])));
  return url;
}

async function ensureClickHouse(stops: Stop[]): Promise<string> {
  if (process.env.CLICKHOUSE_URL) return process.env.CLICKHOUSE_URL;
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-clickhouse-http-'));
  const server = await startWarehouseServer(dataDir, 0);
  stops.push(async () => {
    await kill(server.process, 'SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  });
  return server.url;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts a native service from infra/ unless it already runs; stops it at the end only if this started it. */
async function nativeService(stops: Stop[], name: string, key: string, port: number): Promise<string> {
  const wasRunning = await portOpen(port);
  const value = await infraScript(`${name}/start.sh`, key);
  if (!wasRunning) stops.push(async () => void (await run('bash', [`${INFRA}${name}/stop.sh`])));
  return value;
}

/**
 * Deletes the topics earlier test runs left on the broker. Every test makes topics of its own, named
 * `test-…` (a random prefix), and none deletes them; on infra/'s broker, whose data survives
 * stop.sh/start.sh, they added up run after run until the broker's heap (512 MiB) no longer held their
 * metadata: at 12,542 partitions it ran out of memory in the middle of a suite, and the tests after it
 * failed. Only when no other test run is under way on this machine (a marker per run in the infra home,
 * by pid), so that a run never deletes the topics of another one in progress.
 */
async function deleteLeftoverTopics(brokers: string, stops: Stop[]): Promise<void> {
  const runs = join(process.env.TALLY_INFRA_HOME ?? join(homedir(), '.cache', 'tally-infra'), 'test-runs');
  mkdirSync(runs, { recursive: true });
  const others = readdirSync(runs).filter((name) => {
    const pid = Number(name);
    if (pid === process.pid) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      rmSync(join(runs, name), { force: true }); // a run that ended without its teardown
      return false;
    }
  });
  const marker = join(runs, String(process.pid));
  writeFileSync(marker, '');
  stops.push(async () => rmSync(marker, { force: true }));
  if (others.length > 0) return;
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({
    clientId: 'tally-test-setup',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    // compiled-…: compiled.test.ts's topics, before they were named test-compiled-….
    const leftovers = (await admin.listTopics()).filter((topic) => /^(test|compiled)-/.test(topic));
    for (let i = 0; i < leftovers.length; i += 200) {
      await admin.deleteTopics({ topics: leftovers.slice(i, i + 200), timeout: 120_000 });
    }
  } finally {
    await admin.disconnect();
  }
}

async function ensureKafka(stops: Stop[]): Promise<{ brokers: string; registry: string }> {
  if (process.env.KAFKA_BROKERS && process.env.SCHEMA_REGISTRY_URL) {
    return { brokers: process.env.KAFKA_BROKERS, registry: process.env.SCHEMA_REGISTRY_URL };
  }
  if (dockerReachable()) {
    try {
      const { KafkaContainer } = await import('@testcontainers/kafka');
      const { GenericContainer, Wait } = await import('testcontainers');
      const kafka = await new KafkaContainer(KAFKA_IMAGE).withKraft().start();
      stops.push(async () => void (await kafka.stop()));
      const registry = await new GenericContainer(SCHEMA_REGISTRY_IMAGE)
        .withExposedPorts(8080)
        .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
        .start();
      stops.push(async () => void (await registry.stop()));
      return {
        brokers: `${kafka.getHost()}:${kafka.getMappedPort(9093)}`,
        registry: `http://${registry.getHost()}:${registry.getMappedPort(8080)}/apis/ccompat/v7`,
      };
    } catch (error) {
      console.warn(
        `testcontainers could not start Kafka (${(error as Error).message}); using infra/ instead`,
      );
    }
  }
  // Both JVMs start at once: their start-ups overlap.
  const [brokers, registry] = await Promise.all([
    nativeService(stops, 'kafka', 'KAFKA_BROKERS', Number(process.env.KAFKA_PORT ?? 19092)),
    nativeService(
      stops,
      'schema-registry',
      'SCHEMA_REGISTRY_URL',
      Number(process.env.SCHEMA_REGISTRY_PORT ?? 18081),
    ),
  ]);
  return { brokers, registry };
}

// stripe-mock (Stripe's API mock, for the Stripe import's request shapes): STRIPE_MOCK_URL when set, else
// infra/stripe-mock (installed with `go install`). A test tool only, so no container image is tried.
async function ensureStripeMock(stops: Stop[]): Promise<string> {
  if (process.env.STRIPE_MOCK_URL) return process.env.STRIPE_MOCK_URL;
  return nativeService(
    stops,
    'stripe-mock',
    'STRIPE_MOCK_URL',
    Number(process.env.STRIPE_MOCK_PORT ?? 12111),
  );
}

/** Mailpit, the SMTP server tests send mail through and read back over its API: the environment's, else infra/'s. */
async function ensureMailpit(stops: Stop[]): Promise<{ smtpUrl: string; apiUrl: string }> {
  if (process.env.MAILPIT_SMTP_URL && process.env.MAILPIT_URL) {
    return { smtpUrl: process.env.MAILPIT_SMTP_URL, apiUrl: process.env.MAILPIT_URL };
  }
  const wasRunning = await portOpen(Number(process.env.MAILPIT_HTTP_PORT ?? 18025));
  let stdout: string;
  try {
    ({ stdout } = await run('bash', [`${INFRA}mailpit/start.sh`], { timeout: 300_000 }));
  } catch (error) {
    throw new Error(
      `Could not start Mailpit with infra/mailpit/start.sh (${(error as Error).message}). ` +
        'Set MAILPIT_SMTP_URL and MAILPIT_URL to a running Mailpit, or run infra/install.sh and infra/start.sh.',
    );
  }
  if (!wasRunning) stops.push(async () => void (await run('bash', [`${INFRA}mailpit/stop.sh`])));
  const value = (key: string) =>
    stdout
      .split('\n')
      .find((line) => line.startsWith(`${key}=`))
      ?.slice(key.length + 1);
  const smtpUrl = value('MAILPIT_SMTP_URL');
  const apiUrl = value('MAILPIT_URL');
  if (!smtpUrl || !apiUrl) throw new Error(`infra/mailpit/start.sh printed no endpoints: ${stdout}`);
  return { smtpUrl, apiUrl };
}

/**
 * Builds, once and before any test file runs, what tests read from the tree: the compiled dist/ (and the
 * published packages' CommonJS copies), the tracker's bundles and the dashboard's web app. The tests' own
 * build steps then find them up to date and write nothing, instead of several files building the same
 * outputs at once on a fresh clone (one packing a package while another compiled it).
 */
async function buildOnce(): Promise<void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  for (const script of [
    ['scripts/build.mjs', '--if-stale'],
    ['scripts/build-packages.mjs'],
    ['packages/core/scripts/tracker-bundles.mjs', '--if-stale'],
    ['services/dashboard/web/scripts/build.mjs', '--if-stale'],
  ]) {
    await promisify(execFile)(process.execPath, script, { cwd: root, timeout: 600_000 });
  }
}

export default async function setup(project: TestProject): Promise<Stop> {
  const stops: Stop[] = [];
  await buildOnce();
  project.provide('redisUrl', await ensureRedis(stops));
  project.provide('clickhouseUrl', await ensureClickHouse(stops));
  const kafka = await ensureKafka(stops);
  await deleteLeftoverTopics(kafka.brokers, stops);
  project.provide('kafkaBrokers', kafka.brokers);
  project.provide('schemaRegistryUrl', kafka.registry);
  project.provide('stripeMockUrl', await ensureStripeMock(stops));
  const mailpit = await ensureMailpit(stops);
  project.provide('mailpitSmtpUrl', mailpit.smtpUrl);
  project.provide('mailpitUrl', mailpit.apiUrl);
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
