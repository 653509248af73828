// Starts `npm start`'s all-in-one process (services/embedded: gateway, record log, both consumers and
// the embedded chDB warehouse) for end-to-end tests, on free ports of 127.0.0.1, and reads its
// warehouse through the query endpoint it publishes, as the tally CLI does.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  endpointUrl,
  openClickHouseWarehouse,
  readPublishedEndpoint,
  type Warehouse,
} from '@tally/warehouse';
import { ROOT } from './processes.ts';

export interface TallyProcess {
  process: ChildProcess;
  url: string;
  adminUrl: string;
  output(): string;
  /** Sends the signal (SIGTERM by default) and waits for the exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Settings every child gets: the test's own, never the developer's shell's (a CLICKHOUSE_URL there
 * would send the CLI to another warehouse; '' unsets a setting).
 */
export function pipelineEnv(env: Record<string, string>): Record<string, string> {
  return {
    PORT: '0',
    ADMIN_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    CLICKHOUSE_URL: '',
    CLICKHOUSE_DATABASE: 'tally',
    REDIS_URL: '',
    KAFKA_BROKERS: '',
    SCHEMA_REGISTRY_URL: '',
    CONSUMER_BATCH_WAIT_MS: '50',
    RATE_LIMIT_PER_HOUR: '1000000',
    ...env,
  };
}

export async function startTallyProcess(env: Record<string, string>): Promise<TallyProcess> {
  const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/embedded/src/main.ts'], {
    cwd: ROOT,
    env: { ...inherited, ...pipelineEnv(env) },
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
    const timer = setTimeout(() => reject(new Error(`tally did not start in 60 s:\n${output}`)), 60_000);
    const check = () => {
      const m = output.match(
        /listening on (http:\/\/\S+)\/api\/ingest \(admin: (http:\/\/[^)]+)\)[^\n]*\nWarehouse:/,
      );
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tally exited with ${code}:\n${output}`));
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

/** The warehouse of a running process, through the endpoint it published in its data directory. */
export async function publishedWarehouse(dataDir: string): Promise<Warehouse> {
  const endpoint = readPublishedEndpoint(dataDir);
  if (!endpoint) throw new Error(`no running process publishes a warehouse endpoint in ${dataDir}`);
  return openClickHouseWarehouse({ url: endpointUrl(endpoint), database: 'tally' });
}

export const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';

/** POSTs one record as a browser would (a real browser's User-Agent, so it is not counted as a bot). */
export async function send(
  url: string,
  token: string,
  body: { type: string; id?: string; data: unknown },
  userAgent = BROWSER,
): Promise<Response> {
  return fetch(`${url}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': token, 'user-agent': userAgent },
    body: JSON.stringify(body),
  });
}
