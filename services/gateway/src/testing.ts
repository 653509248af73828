// Builds a gateway for tests: a real embedded log and a real file token store in a temporary directory,
// with one public and one secret token, and any config override. Also: a log whose appends wait for the
// test, reading what a log holds, raw HTTP over a socket (raw-http.ts), and the standalone gateway's loops
// started on a host of the test's, counting their threads.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type TallyConfig } from '@tally/config';
import type { IngestRecord } from '@tally/contract';
import { openEmbeddedLog, type RecordLog } from '@tally/log';
import { decodedOnly } from '@tally/log/conformance';
import { FileTokenStore, TokenVerifier } from '@tally/tokens';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildGateway, type GatewayDeps } from './gateway.ts';
import { type GatewayService, startGatewayService } from './gateway-service.ts';
import type { LoopHost } from './gateway-threads.ts';
import { GatewayMetrics } from './metrics.ts';

export {
  type Conversation,
  converse,
  parseResponses,
  type SlowBody,
  slowBody,
  type WireResponse,
} from './raw-http.ts';

import { FileSaltStore, VisitorIds } from './visitor-id.ts';

/** A configuration for a gateway in a test: `dataDir`, ports the system picks, 127.0.0.1, no logs; `env` over it. */
export function localConfig(dataDir: string, env: Record<string, string> = {}): TallyConfig {
  return loadConfig({
    TALLY_DATA_DIR: dataDir,
    PORT: '0',
    ADMIN_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

export interface TestGateway {
  app: FastifyInstance;
  log: RecordLog;
  config: TallyConfig;
  metrics: GatewayMetrics;
  dataDir: string;
  publicToken: string;
  secretToken: string;
  close(): Promise<void>;
}

export async function testGateway(
  env: Record<string, string> = {},
  options: { openLog?: (dataDir: string) => RecordLog } & Partial<GatewayDeps> = {},
): Promise<TestGateway> {
  const { openLog, ...deps } = options;
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-gw-'));
  const config = loadConfig({ TALLY_DATA_DIR: dataDir, ...env });
  const store = new FileTokenStore(dataDir);
  const publicToken = (await store.create('test-project', 'public')).token;
  const secretToken = (await store.create('test-project', 'secret')).token;
  const tokens = new TokenVerifier(store, { refreshMs: 100_000 });
  await tokens.refresh();
  const log = openLog?.(dataDir) ?? openEmbeddedLog({ path: join(dataDir, 'log') });
  const metrics = new GatewayMetrics();
  const app = await buildGateway({
    config,
    log,
    tokens,
    visitorIds: new VisitorIds(new FileSaltStore(dataDir)),
    metrics,
    ...deps,
  });
  await app.ready();
  return {
    app,
    log,
    config,
    metrics,
    dataDir,
    publicToken,
    secretToken,
    async close() {
      await app.close();
      await log.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An embedded log whose appends wait until `release()` is called; `started` resolves at the first one. */
export function heldLog(dataDir: string) {
  const inner = openEmbeddedLog({ path: join(dataDir, 'log') });
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let markStarted = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const log: RecordLog = {
    consumer: (o) => inner.consumer(o),
    deadLetters: inner.deadLetters,
    health: () => inner.health(),
    close: () => inner.close(),
    async append(records) {
      markStarted();
      await gate;
      return inner.append(records);
    },
  };
  return { log, release: () => release(), started };
}

/**
 * Every record in the log, read by a group of its own: at least `atLeast` of them (polling until they are
 * there, or 5 s have passed), then whatever else one more short poll finds.
 */
export async function recordsIn(log: RecordLog, atLeast: number): Promise<IngestRecord[]> {
  const consumer = log.consumer({ group: `test-${Math.random()}` });
  const records: IngestRecord[] = [];
  const deadline = Date.now() + 5000;
  while (records.length < atLeast && Date.now() < deadline) {
    for (const message of decodedOnly(await consumer.poll({ waitMs: 100 }))) records.push(message.record);
  }
  for (const message of decodedOnly(await consumer.poll({ waitMs: 100 }))) records.push(message.record);
  await consumer.close();
  return records;
}

/**
 * The standalone gateway's loops (startGatewayService) on a host of the test's (its cores and memory choose
 * the layout), and how many Worker threads starting them took (the process's 'worker' event, emitted for
 * every Worker it creates): two loops are two threads beside a main thread that holds the log, or one
 * where the main thread serves a loop itself.
 */
export async function startCountingThreads(
  config: TallyConfig,
  host: LoopHost,
): Promise<{ gateway: GatewayService; threads: number }> {
  let threads = 0;
  const countThread = () => {
    threads++;
  };
  process.on('worker', countThread);
  try {
    const gateway = await startGatewayService(config, pino({ level: 'silent' }), host);
    return { gateway, threads };
  } finally {
    process.off('worker', countThread);
  }
}

/** `tally_gateway_admitted_total` of each loop (its `worker` label), from the admin port's /metrics text. */
export function admittedByWorker(metrics: string): Record<string, number> {
  return Object.fromEntries(
    [...metrics.matchAll(/^tally_gateway_admitted_total\{worker="(\d+)"\} (\d+)$/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  );
}
