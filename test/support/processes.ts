// Starts Tally's real processes for end-to-end tests: the gateway (as `npm start` runs it) on free ports,
// and the tally CLI. Everything listens on 127.0.0.1 and is killed by the test that started it.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitForReadiness } from '@tally/service';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const runFile = promisify(execFile);

/**
 * Node's arguments to run a TypeScript entry point from the sources: tsx, and the export condition that
 * resolves the workspace packages to their src/ instead of their compiled dist/.
 */
export const SOURCE_NODE_ARGS = ['--conditions=@tally/source', '--import', 'tsx'];

export interface GatewayProcess extends SpawnedProcess {
  url: string;
  adminUrl: string;
  /** Every address the process's readiness file names (warehouseUrl, …). */
  endpoints: Record<string, string | null>;
}

export const tempDataDir = () => mkdtempSync(join(tmpdir(), 'tally-e2e-'));

/** Environment for a child process: the test's own settings, none inherited from the developer's shell. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const {
    REDIS_URL: _r,
    TALLY_DATA_DIR: _d,
    TALLY_ENV_FILE: _f,
    KAFKA_BROKERS: _k,
    SCHEMA_REGISTRY_URL: _s,
    CLICKHOUSE_URL: _c,
    ...rest
  } = process.env;
  return { ...rest, LOG_LEVEL: 'warn', TALLY_ENV_FILE: '/dev/null', ...env };
}

/**
 * Starts the gateway process on free ports: from its sources (services/gateway/src/main.ts) unless `entry`
 * names the compiled one (services/gateway/dist/main.js, the image's command).
 */
export function startGatewayProcess(
  env: Record<string, string>,
  entry = 'services/gateway/src/main.ts',
): Promise<GatewayProcess> {
  return spawnTallyService(
    entry,
    childEnv({
      PORT: '0',
      ADMIN_PORT: '0',
      DASHBOARD_PORT: '0',
      HOST: '127.0.0.1',
      DASHBOARD_HOST: '127.0.0.1',
      ...env,
    }),
    30_000,
  );
}

/** Starts a consumer as its own process (services/<service>/src/main.ts) with the test's own settings. */
export function startConsumerProcess(
  service: 'analytics-consumer' | 'revenue-consumer',
  env: Record<string, string>,
): Promise<GatewayProcess> {
  return spawnTallyService(`services/${service}/src/main.ts`, childEnv(env), 60_000);
}

/**
 * Spawns one of Tally's processes from its entry point (spawnWithOutput) and waits until it is ready: until it
 * has written its readiness file (TALLY_READY_FILE, a file of the test's own), which names the addresses
 * it serves; rejects with the process's output if it exits first.
 */
export async function spawnTallyService(
  script: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<GatewayProcess> {
  const readyFile = join(mkdtempSync(join(tmpdir(), 'tally-ready-')), 'ready.json');
  const child = spawnWithOutput(script, { ...env, TALLY_READY_FILE: readyFile });
  try {
    const { endpoints } = await waitForReadiness(
      readyFile,
      child.process.pid as number,
      timeoutMs,
      child.exited,
    );
    return {
      ...child,
      url: endpoints.url ?? '',
      adminUrl: endpoints.adminUrl ?? '',
      endpoints,
    };
  } catch (error) {
    await child.stop('SIGKILL');
    throw new Error(`${script}: ${(error as Error).message}:\n${child.output()}`);
  }
}

export interface SpawnedProcess {
  process: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
  /**
   * Sends the signal (SIGTERM by default) and waits for the exit; resolves with the exit code. A process
   * still running `graceMs` later (STOP_GRACE_MS) is killed (SIGKILL), and the call rejects with its output: a child
   * that hangs on its way out fails its test with what it printed, instead of holding it until the test's
   * own timeout, silently, and staying behind for the tests after it.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

/**
 * How long stop() waits for a process to exit after its signal: well past a clean shutdown of any of
 * Tally's processes under the tests' loads (seconds), and within the integration tests' 180 s timeout.
 */
const STOP_GRACE_MS = 90_000;

/**
 * Spawns an entry point, keeping its stdout and stderr: a TypeScript one with tsx, resolving the workspace
 * packages to their sources; a compiled `.js` one with plain Node, as production runs it.
 */
export function spawnWithOutput(script: string, env: NodeJS.ProcessEnv): SpawnedProcess {
  const args = script.endsWith('.ts') ? [...SOURCE_NODE_ARGS, script] : [script];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    // The checkout's .env is the developer's: a child reads the env file its test names, else none.
    env: { TALLY_ENV_FILE: '/dev/null', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    process: child,
    exited,
    output: () => output,
    async stop(signal = 'SIGTERM', graceMs = STOP_GRACE_MS) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<'hung'>((resolve) => {
        timer = setTimeout(() => resolve('hung'), graceMs);
      });
      const outcome = await Promise.race([exited, hung]).finally(() => clearTimeout(timer));
      if (outcome !== 'hung') return outcome;
      child.kill('SIGKILL');
      await exited;
      throw new Error(
        `${script} (pid ${child.pid}) had not exited ${graceMs} ms after ${signal}; ` +
          `killed. Its output:\n${output}`,
      );
    },
  };
}

/** Waits until a process's output matches `pattern` (for programs that are not Tally's services). */
export async function outputMatching(
  spawned: SpawnedProcess,
  pattern: RegExp,
  timeoutMs: number,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void spawned.exited.then(() => {
    exited = true;
  });
  for (;;) {
    const match = spawned.output().match(pattern);
    if (match) return match;
    if (exited || Date.now() > deadline) {
      throw new Error(
        `no output matching ${pattern} (${exited ? 'exited' : 'timed out'}):\n${spawned.output()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `tally …` as a user would (the bin that `npx tally` runs) and returns its stdout. */
export async function tally(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await runFile(process.execPath, ['packages/cli/bin/tally.js', ...args], {
    cwd: ROOT,
    env: childEnv(env),
    timeout: 30_000,
  });
  return stdout;
}

/** Polls `check` until it returns true or `ms` pass; returns how long it took, or throws. */
export async function eventually(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not happen within ${ms} ms`);
}

export async function postIngest(url: string, body: unknown, token?: string): Promise<Response> {
  return fetch(`${url}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-api-token': token } : {}) },
    body: JSON.stringify(body),
  });
}
