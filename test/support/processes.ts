// Starts Tally's real processes for end-to-end tests: the gateway (as `npm start` runs it) on free ports,
// and the tally CLI. Everything listens on 127.0.0.1 and is killed by the test that started it.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const runFile = promisify(execFile);

export interface GatewayProcess {
  process: ChildProcess;
  url: string;
  adminUrl: string;
  output(): string;
  /** Waits for the process to exit after the given signal. */
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

export async function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/gateway/src/main.ts'], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in 30 s:\n${output}`)), 30_000);
    const check = () => {
      const m = output.match(/listening on (http:\/\/\S+)\/api\/ingest \(admin: (http:\/\/[^)]+)\)/);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${output}`));
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
