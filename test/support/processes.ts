// Starts Tally's real processes for end-to-end tests: the gateway (as `npm start` runs it) on free ports,
// and the tally CLI. Everything listens on 127.0.0.1 and is killed by the test that started it.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node's arguments to run a TypeScript entry point from the sources: tsx, and the export condition that
 * resolves the workspace packages to their src/ instead of their compiled dist/.
 */
export const SOURCE_NODE_ARGS = ['--conditions=@tally/source', '--import', 'tsx'];
const runFile = promisify(execFile);

export interface GatewayProcess {
  process: ChildProcess;
  url: string;
  adminUrl: string;
  output(): string;
  /** Sends the signal (SIGTERM by default) and waits for the exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
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
  return { ...rest, LOG_LEVEL: 'warn', ...env };
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
    childEnv({ PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ...env }),
    /listening on (http:\/\/\S+)\/api\/ingest \(admin: (http:\/\/[^)]+)\)/,
    30_000,
  );
}

/**
 * Spawns one of Tally's processes from its TypeScript entry point (with tsx, resolving the workspace
 * packages to their sources), or from a compiled `.js` one with plain Node, and waits until its output matches
 * `ready` (whose groups 1 and 2 are the public and admin URLs); rejects with the output if it exits first.
 */
export async function spawnTallyService(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs: number,
): Promise<GatewayProcess> {
  const args = script.endsWith('.ts') ? [...SOURCE_NODE_ARGS, script] : [script];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} did not start in ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      output += d;
      const m = output.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${output}`));
    });
  });
  return {
    process: child,
    url: started[1] as string,
    adminUrl: started[2] as string,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
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
