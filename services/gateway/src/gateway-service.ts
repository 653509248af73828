// The gateway's GATEWAY_WORKERS event loops, assembled here once for both processes that run them: the
// standalone gateway (main.ts, startGatewayService) and npm start's (services/embedded, startGatewayLoops).
// Worker threads serve the port (gateway-threads.ts). With the embedded log and several loops the process
// holds the log, the one writer, to which the threads append through MessagePorts (its group commit takes
// all of their records): npm start's own log (its consumers'), else one opened here. With one loop the
// thread opens the log itself, as the writer; with Kafka each thread has its own producer.
// The standalone gateway with one loop (one core, or a Node.js without reusePort) runs in the main thread,
// as startGateway builds it; with several it serves the admin port with every loop's metrics merged, and
// where its memory is short of an isolate more than the loops, its main thread serves the first loop too.
import type { TallyConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import {
  allHealthy,
  buildAdmin,
  type Health,
  type MetricsJson,
  mergedMetrics,
  type Resources,
  startOrUnwind,
} from '@tally/service';
import type { Logger } from 'pino';
import {
  type GatewayWorkers,
  gatewayLoops,
  type LoopHost,
  MEMORY_PER_LOOP_MIB,
  sharedByThreads,
  startGatewayWorkers,
  thisHost,
} from './gateway-threads.ts';
import { type RunningGateway, startGateway } from './runtime.ts';

export interface GatewayLoopsOptions {
  logger: Logger;
  /**
   * The record log the process holds already (npm start's consumers'), opened as the writer when the
   * threads append to it (holdsLogWriter); without it, one is opened here when they need it.
   */
  log?: RecordLog;
  /** Whether the first thread compares the Kafka topics' settings (false where the process's own log does). */
  checkLogSettings?: boolean;
  /**
   * Set while the consumers of the process are too far behind (npm start: landingBehindFlag, set by
   * LagGate); the loops then answer 503 at once (admission.ts).
   */
  landingBehind?: Int32Array;
  /** The cores and memory the loops are counted from (gatewayLoops; tests give their own). */
  host?: LoopHost;
}

/**
 * Whether the process holds the embedded log's one writer for its gateway threads: with several event
 * loops on the embedded log (one loop's thread is the writer itself; on Kafka each has its producer).
 */
export function holdsLogWriter(config: TallyConfig, host: LoopHost = thisHost()): boolean {
  return gatewayLoops(config, host).loops > 1 && config.backends.log.kind === 'embedded';
}

/** The embedded log's one writer, opened for a process's gateway loops to append to. */
function openLoopsWriter(config: TallyConfig, logger: Logger): Promise<RecordLog> {
  return openRecordLog(config, {
    onWarning: (message: string, error: unknown) => logger.warn({ err: error }, message),
    writer: true,
    // Its pages are released as the log grows (the loops' appends wait a few ms meanwhile).
    releasePages: true,
  });
}

/**
 * Starts the gateway's event loops in worker threads (GATEWAY_WORKERS, or one where reusePort is missing).
 * Their health includes that of the log opened for them here; their close drains them, then closes it.
 */
export async function startGatewayLoops(
  config: TallyConfig,
  options: GatewayLoopsOptions,
): Promise<GatewayWorkers> {
  const { logger } = options;
  const host = options.host ?? thisHost();
  const { loops, note } = gatewayLoops(config, host);
  if (note) logger[note.level](note.message);
  return startOrUnwind(async (resources) => {
    let appendLog: RecordLog | null = null;
    if (holdsLogWriter(config, host)) {
      appendLog =
        options.log ??
        resources.add(
          await openLoopsWriter(config, logger),
          (log) => log.close(), // releases the embedded log's writer lock, once the threads have drained
        );
    }
    const ownLog = options.log ? null : appendLog;
    // One loop in npm start: its thread opens the embedded log as the writer beside the caller's handle
    // (the consumers'), which closes while the thread reopens its own (thread/release-port.ts in @tally/log).
    const sharedLog = !appendLog && config.backends.log.kind === 'embedded' ? options.log : undefined;
    const workers = resources.add(
      await startGatewayWorkers(config, {
        count: loops,
        ...(appendLog && { appendLog }),
        ...(sharedLog && { sharedLog }),
        checkLogSettings: options.checkLogSettings ?? true,
        landingBehind: options.landingBehind,
      }),
      (running) => running.close(), // drained: every append in flight has been answered by the log
    );
    return {
      url: workers.url,
      count: workers.count,
      metrics: () => workers.metrics(),
      health: () => allHealthy([() => workers.health(), ...(ownLog ? [() => ownLog.health()] : [])]),
      failed: workers.failed,
      close: () => resources.close(),
    };
  });
}

export interface GatewayService {
  url: string;
  adminUrl: string | null;
  /** How many event loops serve the public port. */
  workers: number;
  /** Rejects if a gateway thread fails (never, with one loop in the main thread). */
  readonly failed: Promise<never>;
  close(): Promise<void>;
}

/**
 * The standalone gateway process: its event loops and its admin server. With several loops its main thread
 * holds the embedded log's one writer, to which the loops' threads append, and serves the admin port; where
 * the process's memory does not hold an isolate more than the loops (gatewayLoops' `mainLoop`: a container
 * under (loops + 1) × MEMORY_PER_LOOP_MIB), the main thread is also the first loop, so that N loops are N
 * V8 isolates, not N + 1 (each ~50–65 MiB under load; BENCHMARKS.md, 2026-11-28, "The main thread as the
 * first loop").
 */
export async function startGatewayService(
  config: TallyConfig,
  logger: Logger,
  host: LoopHost = thisHost(),
): Promise<GatewayService> {
  const { loops, mainLoop, note } = gatewayLoops(config, host);
  if (loops <= 1) {
    if (note) logger[note.level](note.message);
    const gateway = await startGateway(config, { logger });
    return {
      url: gateway.url,
      adminUrl: gateway.adminUrl,
      workers: 1,
      failed: new Promise<never>(() => {}),
      close: () => gateway.close(),
    };
  }
  return startOrUnwind(async (resources) => {
    // The admin server closes after the loops, so that it answers (not ready) while they drain; it
    // listens once they do.
    let serving: { health(): Promise<Health>; metrics(): Promise<MetricsJson[]> } | null = null;
    const admin = resources.add(
      buildAdmin({
        health: async () => (serving ? serving.health() : { ok: false, detail: 'starting' }),
        metrics: async () => mergedMetrics([], (await serving?.metrics()) ?? []),
        logger,
      }),
      (server) => server.close(),
    );
    const running = mainLoop
      ? await startWithMainLoop(config, { logger, loops, note }, resources)
      : resources.add(await startGatewayLoops(config, { logger, host }), (started) => started.close());
    serving = running;
    const adminUrl = await admin.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
    return {
      url: running.url,
      adminUrl,
      workers: loops,
      failed: running.failed,
      close: () => resources.close(),
    };
  });
}

/**
 * The loops of startGatewayService where its main thread serves the first: the embedded log's writer held
 * here (this thread's appends go to it directly, the threads' through their MessagePorts, all in its group
 * commits; on Kafka each loop has its producer), loop 0 in this thread, the others beside it on its port.
 */
async function startWithMainLoop(
  config: TallyConfig,
  { logger, loops, note }: { logger: Logger; loops: number; note: ReturnType<typeof gatewayLoops>['note'] },
  resources: Resources,
): Promise<Pick<GatewayWorkers, 'url' | 'failed' | 'health' | 'metrics'>> {
  if (note) logger[note.level](note.message);
  logger.info(
    `the main thread serves one of the ${loops} gateway event loops: the process's memory does not hold ` +
      `a thread for each beside it (about ${MEMORY_PER_LOOP_MIB} MiB each)`,
  );
  const log =
    config.backends.log.kind === 'embedded'
      ? resources.add(await openLoopsWriter(config, logger), (opened) => opened.close()) // once every loop has drained
      : undefined;
  const shared = sharedByThreads(config);
  // Closed together, each draining its own connections.
  let own: RunningGateway | null = null;
  let threads: GatewayWorkers | null = null;
  resources.defer(() => Promise.all([own?.close(), threads?.close()]));
  own = await startGateway(config, {
    logger,
    admin: false,
    worker: '0',
    reusePort: true,
    loops,
    shared,
    ...(log && { log }),
  });
  const port = Number(new URL(own.url).port);
  threads = await startGatewayWorkers(
    { ...config, PORT: port },
    { count: loops - 1, ...(log && { appendLog: log }), beside: { first: 1, loops, shared } },
  );
  const ownLoop = own;
  const otherLoops = threads;
  return {
    url: ownLoop.url,
    failed: otherLoops.failed,
    health: () => allHealthy([() => ownLoop.log.health(), () => otherLoops.health()]),
    metrics: async () => [await ownLoop.metrics.registry.getMetricsAsJSON(), ...(await otherLoops.metrics())],
  };
}
