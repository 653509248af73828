// What the benchmarks run against: the gateway process (services/gateway/dist/main.js, as the Dockerfile
// runs it) and `npm start`'s all-in-one process (services/embedded/dist/main.js), compiled as production
// runs them (or from the TypeScript sources, to compare), each on free ports of
// 127.0.0.1 with its own data directory; the tokens they accept; and, for the Kafka runs, Redis, Kafka and
// the schema registry (from the environment, else started natively through infra/ and stopped again at the
// end if the benchmark started them). Each run uses its own topic and key prefixes and removes them after.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitForReadiness } from '@tally/service';
import { FileTokenStore, RedisTokenStore } from '@tally/tokens';
import { Redis } from 'ioredis';
import kafkajs from 'kafkajs';
import { buildIfStale } from '../../scripts/build.mjs';
import {
  type Child,
  killChildrenOnExit,
  onInterrupt,
  ROOT,
  startCompiled,
  startNode,
  stopAll,
} from './children.ts';
import type { ProjectTokens } from './workload.ts';

const run = promisify(execFile);

export const tempDir = (name: string) => mkdtempSync(join(tmpdir(), `tally-bench-${name}-`));
export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });

/**
 * Settings of every process under test: none inherited from the shell's Tally settings, only
 * 127.0.0.1, a rate limit high enough for a benchmark (but on), and the client IP taken from
 * X-Forwarded-For as behind a reverse proxy on the same machine.
 */
export function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const {
    REDIS_URL: _r,
    TALLY_DATA_DIR: _d,
    TALLY_ENV_FILE: _f,
    KAFKA_BROKERS: _k,
    SCHEMA_REGISTRY_URL: _s,
    CLICKHOUSE_URL: _c,
    ...rest
  } = process.env;
  return {
    ...rest,
    TALLY_ENV_FILE: '/dev/null',
    PORT: '0',
    ADMIN_PORT: '0',
    DASHBOARD_PORT: '0',
    DASHBOARD_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_HOUR: '1000000000',
    TRUST_PROXY: '127.0.0.1',
    ...env,
  };
}

export interface Services {
  redisUrl: string;
  kafkaBrokers: string;
  schemaRegistryUrl: string;
  /** Local processes behind those endpoints (name → pid), watched so their CPU is not counted as others'. */
  pids: Record<string, number>;
  /** Stops what this benchmark started (nothing that was already running). */
  stop(): Promise<void>;
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

async function infraService(name: string, key: string, port: number, stops: Array<() => Promise<void>>) {
  const wasRunning = await portOpen(port);
  const { stdout } = await run('bash', [join(ROOT, 'infra', name, 'start.sh')], { timeout: 300_000 });
  const last = stdout.trim().split('\n').at(-1) ?? '';
  if (!last.startsWith(`${key}=`)) throw new Error(`infra/${name}/start.sh printed no ${key}: ${stdout}`);
  if (!wasRunning) stops.push(async () => void (await run('bash', [join(ROOT, 'infra', name, 'stop.sh')])));
  return last.slice(key.length + 1);
}

/** Redis, Kafka and the schema registry: from the environment, else native ones from infra/. */
export async function ensureServices(): Promise<Services> {
  const stops: Array<() => Promise<void>> = [];
  try {
    const redisUrl = process.env.REDIS_URL ?? (await infraService('redis', 'REDIS_URL', 16379, stops));
    let kafkaBrokers = process.env.KAFKA_BROKERS;
    let schemaRegistryUrl = process.env.SCHEMA_REGISTRY_URL;
    if (!kafkaBrokers || !schemaRegistryUrl) {
      [kafkaBrokers, schemaRegistryUrl] = await Promise.all([
        infraService('kafka', 'KAFKA_BROKERS', 19092, stops),
        infraService('schema-registry', 'SCHEMA_REGISTRY_URL', 18081, stops),
      ]);
    }
    const pids: Record<string, number> = {};
    for (const [name, url] of [
      ['redis', redisUrl],
      ['kafka broker', `tcp://${kafkaBrokers.split(',')[0]}`],
      ['schema registry', schemaRegistryUrl],
    ] as const) {
      const pid = await pidListeningOn(new URL(url));
      if (pid) pids[name] = pid;
    }
    return {
      redisUrl,
      kafkaBrokers,
      schemaRegistryUrl,
      pids,
      async stop() {
        for (const stop of stops.reverse()) await stop().catch(() => {});
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    throw new Error(
      `Kafka runs need Redis, Kafka and a schema registry (${(error as Error).message}). Set REDIS_URL, ` +
        'KAFKA_BROKERS and SCHEMA_REGISTRY_URL, or let infra/ install them (bash infra/install.sh).',
    );
  }
}

/** The pid of the local process listening on a URL's port (through `ss`), or null. */
async function pidListeningOn(url: URL): Promise<number | null> {
  if (!['127.0.0.1', 'localhost'].includes(url.hostname) || !url.port) return null;
  try {
    const { stdout } = await run('ss', ['-ltnpH', `sport = :${url.port}`], { timeout: 5000 });
    const pid = Number(/pid=(\d+)/.exec(stdout)?.[1]);
    return pid || null;
  } catch {
    return null;
  }
}

/** Creates a public and a secret token for each of `projects` projects, in the store the server reads. */
export async function createTokens(
  projects: number,
  where: { dataDir: string } | { redisUrl: string; prefix: string },
): Promise<ProjectTokens[]> {
  const redis = 'redisUrl' in where ? new Redis(where.redisUrl, { maxRetriesPerRequest: 1 }) : null;
  const store = redis && 'prefix' in where ? new RedisTokenStore(redis, where.prefix) : null;
  const file = 'dataDir' in where ? new FileTokenStore(where.dataDir) : null;
  try {
    const tokens: ProjectTokens[] = [];
    for (let i = 1; i <= projects; i++) {
      const project = `bench-site-${i}`;
      const s = store ?? file;
      if (!s) throw new Error('no token store');
      const publicToken = (await s.create(project, 'public')).token;
      const secretToken = (await s.create(project, 'secret')).token;
      tokens.push({ project, publicToken, secretToken });
    }
    return tokens;
  } finally {
    await store?.close();
    redis?.disconnect();
  }
}

export interface ServerProcess {
  child: Child;
  url: string;
  adminUrl: string;
}

/**
 * How a service runs: `compiled`, its dist/main.js with plain Node, as production (the image, npm start)
 * runs it, compiled first when dist/ is missing or stale (as npm start does); `sources`, its src/main.ts
 * through tsx, as in development.
 */
export type Runtime = 'compiled' | 'sources';

/** Starts a Tally service (`services/<service>`) and waits for its readiness file (TALLY_READY_FILE). */
async function startService(
  name: string,
  service: string,
  runtime: Runtime,
  env: Record<string, string>,
  nodeArgs: string[],
  timeoutMs: number,
  cgroup?: string,
) {
  const readyDir = mkdtempSync(join(tmpdir(), 'tally-bench-ready-'));
  const readyFile = join(readyDir, 'ready.json');
  const options = {
    env: serverEnv({ ...env, TALLY_READY_FILE: readyFile }),
    nodeArgs,
    ...(cgroup && { cgroup }),
  };
  if (runtime === 'compiled') buildIfStale(ROOT);
  const child =
    runtime === 'compiled'
      ? startCompiled(name, `services/${service}/dist/main.js`, [], options)
      : startNode(name, `services/${service}/src/main.ts`, [], options);
  // The service removes its readiness file on its way out; its folder goes with the process.
  void child.exited.then(() => rmSync(readyDir, { recursive: true, force: true }));
  try {
    const { endpoints } = await waitForReadiness(readyFile, child.pid, timeoutMs, child.exited);
    return { child, url: endpoints.url ?? '', adminUrl: endpoints.adminUrl ?? '' };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/**
 * The node flags of the image's command (the Dockerfile's CMD, between `node` and the script: V8's young
 * generation, see its comment), so that the benchmarks start the gateway as the image runs it.
 */
export function imageNodeFlags(): string[] {
  const cmd = /^CMD (.*)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
  const argv = cmd ? (JSON.parse(cmd) as string[]) : [];
  return argv.slice(1, -1).filter((arg) => arg.startsWith('-'));
}

export interface GatewayServerOptions {
  /** More node flags (a CPU profile's). */
  nodeArgs?: string[];
  runtime?: Runtime;
  /** A memory cgroup's directory (lib/cgroup.ts) to start it in, as in a container with a memory limit. */
  cgroup?: string | undefined;
  /** Start it with the image's node flags (imageNodeFlags; default true); false to measure it without. */
  imageFlags?: boolean;
}

/**
 * The gateway alone, as the Dockerfile's command runs it (`node <imageNodeFlags> services/gateway/dist/main.js`);
 * inside `cgroup` (lib/cgroup.ts) when given, as in a container with a memory limit.
 */
export function startGatewayServer(
  env: Record<string, string>,
  options: GatewayServerOptions = {},
): Promise<ServerProcess> {
  const flags = options.imageFlags === false ? [] : imageNodeFlags();
  return startService(
    'gateway',
    'gateway',
    options.runtime ?? 'compiled',
    env,
    [...flags, ...(options.nodeArgs ?? [])],
    60_000,
    options.cgroup,
  );
}

/** `npm start`'s process: gateway, record log, both consumers and the embedded chDB warehouse. */
export function startTallyServer(
  env: Record<string, string>,
  nodeArgs: string[] = [],
  runtime: Runtime = 'compiled',
): Promise<ServerProcess> {
  return startService('tally', 'embedded', runtime, env, nodeArgs, 120_000);
}

/** Deletes the topics a run created (its own prefix) and its Redis keys; best effort, bounded. */
export async function removeRunState(services: Services, topicPrefix: string, redisPrefix: string) {
  const { Kafka, logLevel } = kafkajs;
  const kafka = new Kafka({
    clientId: 'tally-bench-cleanup',
    brokers: services.kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(topicPrefix));
    if (topics.length) await admin.deleteTopics({ topics, timeout: 10_000 });
  } catch {
    // a topic left behind is harmless: every run has its own prefix
  } finally {
    await admin.disconnect().catch(() => {});
  }
  const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } catch {
    // as above
  } finally {
    redis.disconnect();
  }
}

/**
 * Runs `runBackend` for each comma-separated backend (embedded, kafka), starting Redis, Kafka and the
 * registry only when Kafka is among them, and stops every process it started, also on an error.
 */
export async function runBackends<T>(
  names: string,
  runBackend: (backend: string, services: Services | null) => Promise<T>,
): Promise<T[]> {
  killChildrenOnExit();
  const backends = names.split(',');
  let services: Services | null = null;
  const results: T[] = [];
  try {
    if (backends.includes('kafka')) {
      const started = await ensureServices();
      services = started;
      onInterrupt(() => started.stop());
    }
    for (const backend of backends) {
      if (backend !== 'embedded' && backend !== 'kafka') throw new Error(`unknown backend ${backend}`);
      results.push(await runBackend(backend, services));
    }
  } finally {
    await stopAll();
    await (services as Services | null)?.stop();
  }
  return results;
}
