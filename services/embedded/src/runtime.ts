// startTally: the whole pipeline in one process on embedded defaults, as `npm start` runs it: the gateway
// in worker threads of its own (GATEWAY_WORKERS event loops sharing the port; one thread is the embedded
// log's writer itself, several append through MessagePorts to the main thread's log, the one writer, whose
// group commit takes all their records; on Kafka each has its producer), both consumers in the main thread
// reading the same log through the RecordLog interface (never on the ingestion threads), each with a
// connection of its own to the warehouse (chDB in TALLY_DATA_DIR/warehouse, or a ClickHouse server when
// CLICKHOUSE_URL is set), and the admin server, whose metrics are the consumers' and the gateway thread's
// together. While a consumer group is GATEWAY_MAX_CONSUMER_LAG records behind, the gateway's threads
// answer 503 (LagGate, @tally/consumer): the process accepts no faster, for long, than it lands.
// chDB lets one process open its data directory, so this process also serves ClickHouse's HTTP interface
// over it (on WAREHOUSE_HTTP_HOST, loopback by default) for a writer and a read-only analyst user, and
// publishes where and with which credentials (TALLY_DATA_DIR/warehouse-http.json): that is how
// `tally sql`, the reports and analysts' tools reach the warehouse while it runs.
// The dashboard (services/dashboard) runs here too, on DASHBOARD_PORT, reading the warehouse through a
// connection of its own (chDB admits several connections in the process that holds the directory).
import { startAnalyticsConsumer } from '@tally/analytics-consumer';
import type { TallyConfig } from '@tally/config';
import { ConsumerMetrics, ConsumerProgress, LagGate, type RunningBatchLoop } from '@tally/consumer';
import { startDashboard } from '@tally/dashboard';
import { type GatewayWorkers, holdsLogWriter, landingBehindFlag, startGatewayLoops } from '@tally/gateway';
import { openRecordLog } from '@tally/log';
import { startRevenueConsumer } from '@tally/revenue-consumer';
import { allHealthy, buildAdmin, mergedMetrics, startOrUnwind, watchLogSettings } from '@tally/service';
import {
  embeddedWarehouseDir,
  migrate,
  openWarehouse,
  type Warehouse,
  type WarehouseDamage,
  warehouseDamage,
  withRetry,
} from '@tally/warehouse';
import {
  analystLimits,
  type ClickHouseHttpInterface,
  publishEndpoint,
  serveClickHouseHttp,
  unpublishEndpoint,
  warehouseCredentials,
  writerLimits,
} from '@tally/warehouse-http';
import { type Logger, pino } from 'pino';

export interface RunningTally {
  /** The gateway, in its worker threads. */
  gateway: Pick<GatewayWorkers, 'url' | 'count'>;
  /** The admin server (/healthz, /readyz, /metrics). */
  adminUrl: string;
  /** The ClickHouse HTTP interface over the embedded warehouse (null with CLICKHOUSE_URL). */
  warehouseUrl: string | null;
  /** The dashboard (web app and read API). */
  dashboardUrl: string;
  /** Rejects if a consumer stops on a failure it cannot retry, or the gateway thread fails. */
  readonly failed: Promise<never>;
  close(): Promise<void>;
}

export async function startTally(
  config: TallyConfig,
  logger: Logger = defaultLogger(config),
): Promise<RunningTally> {
  const { dataDir } = config;
  // Closed in the reverse order of what is registered below: the dashboard and its connection, the gateway
  // (no new records; in-flight appends finish), the consumers (the batches in hand land and commit), their
  // progress, the admin server, the log, the HTTP interface and its published endpoint, the warehouse.
  return startOrUnwind(async (resources) => {
    // A consumer's connection to the warehouse, its operations retried.
    const consumerWarehouse = async () =>
      resources.add(
        withRetry(await openWarehouse(config), {
          onRetry: (error, attempt) =>
            logger.warn({ err: error, attempt }, 'warehouse operation failed; retrying'),
        }),
        (opened) => opened.close(),
      );
    // The warehouse first: if another process holds the chDB directory, fail before taking any port.
    const warehouse = await consumerWarehouse();
    // The revenue consumer's own connection: chDB runs one statement at a time per connection, so with one
    // for both consumers each waited for the other's statements; with two they run side by side.
    const revenueWarehouse = await consumerWarehouse();
    // ClickHouse's HTTP interface over the embedded warehouse (served below, with chDB), and the file that
    // publishes it: registered here so that they go after the log closes, just before the warehouse.
    let http: ClickHouseHttpInterface | null = null;
    resources.defer(async () => {
      if (!http) return;
      unpublishEndpoint(dataDir);
      await http.close();
    });
    // The consumers' record log. With one gateway loop, its thread opens its own instance of it, as the
    // writer, and this one closes while that one reopens to release the file's pages; with several, they
    // append to this one, which is then the writer and reopens itself (startGatewayLoops).
    const consumersLog = resources.add(
      await openRecordLog(config, {
        onWarning: (message: string, error: unknown) =>
          error === undefined ? logger.warn(message) : logger.warn({ err: error }, message),
        ...(holdsLogWriter(config) && { writer: true, releasePages: true }),
      }),
      (log) => log.close(),
    );
    const metrics = new ConsumerMetrics();
    // Whether the consumers make progress: the admin server's readiness, the metrics, the health view.
    const consumerProgress = new ConsumerProgress({
      stallMs: config.CONSUMER_STALL_MS,
      log: consumersLog,
      logger: logger.child({ component: 'consumers' }),
    });
    metrics.watch(consumerProgress);
    watchLogSettings(metrics.registry, consumersLog);
    const migrations = await migrate(warehouse);
    if (migrations.applied.length) logger.info({ applied: migrations.applied }, 'warehouse migrated');
    // Parts the engine found damaged and detached as it opened the warehouse: their records are missing
    // until they are landed again (tally warehouse reland). Not ready, and said, until then; landing goes on.
    const damage = await warehouseDamage(warehouse).catch((error: unknown) => {
      logger.warn(
        { err: error },
        'the warehouse did not list its detached parts: lost records cannot be told',
      );
      return { ok: true, parts: [] } as WarehouseDamage;
    });
    if (!damage.ok) logger.error({ damaged_parts: damage.parts }, damage.detail);
    const warehouseHealth = async () => (damage.ok ? { ok: true } : { ok: false, detail: damage.detail });
    if (config.backends.warehouse.kind === 'chdb') {
      const { writer, analyst } = warehouseCredentials(dataDir);
      http = await serveClickHouseHttp({
        dataDir: embeddedWarehouseDir(dataDir),
        host: config.WAREHOUSE_HTTP_HOST,
        port: config.WAREHOUSE_HTTP_PORT,
        database: config.CLICKHOUSE_DATABASE,
        users: [
          { name: writer.user, password: writer.password, readonly: 0, limits: writerLimits(config) },
          { name: analyst.user, password: analyst.password, readonly: 1, limits: analystLimits(config) },
        ],
        onInternalError: (error) =>
          logger.error({ err: error }, 'warehouse HTTP interface failed on a request'),
      });
      publishEndpoint(dataDir, { url: http.url, ...writer, analyst, pid: process.pid });
    }
    // The admin server closes after the gateway and the consumers, so it answers (not ready) while they
    // stop; it listens once the gateway does.
    let gateway: GatewayWorkers | null = null;
    const admin = resources.add(
      buildAdmin({
        health: () =>
          allHealthy([
            async () => (gateway ? gateway.health() : { ok: false, detail: 'starting' }),
            () => consumersLog.health(),
            () => consumerProgress.health(),
            warehouseHealth,
          ]),
        metrics: async () => mergedMetrics([metrics.registry], (await gateway?.metrics()) ?? []),
        logger,
      }),
      (server) => server.close(),
    );
    resources.add(consumerProgress, (progress) => progress.stop());
    // Ingestion held back while a consumer group is more than GATEWAY_MAX_CONSUMER_LAG records behind
    // (lag-gate.ts in @tally/consumer): what is acknowledged then lands within that bound.
    // Off (0): no flag, and the gateway checks none.
    const landingBehind = config.GATEWAY_MAX_CONSUMER_LAG > 0 ? landingBehindFlag() : undefined;
    const lagGate = landingBehind
      ? resources.add(
          new LagGate({
            progress: consumerProgress,
            maxLag: config.GATEWAY_MAX_CONSUMER_LAG,
            flag: landingBehind,
            logger: logger.child({ component: 'consumers' }),
          }),
          (gate) => gate.stop(),
        )
      : null;
    // The consumers start last, once everything else runs, and stop once the gateway has drained.
    const consumers: RunningBatchLoop[] = [];
    resources.defer(() => Promise.all(consumers.map((consumer) => consumer.stop())));
    const threads = resources.add(
      await startGatewayLoops(config, {
        logger,
        log: consumersLog,
        // The consumers' log compared the Kafka topics' settings already: the gateway threads need not.
        checkLogSettings: false,
        ...(landingBehind && { landingBehind }),
      }),
      (loops) => loops.close(),
    );
    gateway = threads;
    const adminUrl = await admin.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
    // The dashboard's own connection: its reads never queue behind the consumers' statements.
    const dashboardWarehouse = resources.add(await openWarehouse(config), (opened) => opened.close());
    const dashboard = resources.add(
      await startDashboard(
        // The port the gateway got (PORT may be 0), for the install snippet's address.
        { ...config, PORT: Number(new URL(threads.url).port) },
        {
          warehouse: dashboardWarehouse,
          // As the consumers' lines name their consumer (a second `service` key would repeat the base's).
          logger: logger.child({ component: 'dashboard' }),
          log: consumersLog,
          consumers: consumerProgress,
          ...(lagGate && { ingestionHold: () => lagGate.hold() }),
        },
      ),
      (running) => running.close(),
    );

    const batch = { maxRecords: config.CONSUMER_BATCH_SIZE, maxWaitMs: config.CONSUMER_BATCH_WAIT_MS };
    const consumer = (name: string, warehouse: Warehouse) => ({
      log: consumersLog,
      warehouse,
      batch,
      logger: logger.child({ consumer: name }),
      metrics,
      progress: consumerProgress,
    });
    const analytics = startAnalyticsConsumer(consumer('analytics', warehouse));
    const revenue = startRevenueConsumer({
      ...consumer('revenue', revenueWarehouse),
      batch: { ...batch, maxWaitMs: config.REVENUE_BATCH_WAIT_MS },
    });
    consumers.push(analytics, revenue);
    consumerProgress.start();
    lagGate?.start();
    const failed = Promise.race([analytics.done, revenue.done, threads.failed]).then(
      () => new Promise<never>(() => {}),
    );
    failed.catch(() => {}); // observed by the caller; never an unhandled rejection

    return {
      gateway: { url: threads.url, count: threads.count },
      adminUrl,
      warehouseUrl: http?.url ?? null,
      dashboardUrl: dashboard.url,
      failed,
      close: () => resources.close(),
    };
  });
}

function defaultLogger(config: TallyConfig): Logger {
  return pino({ level: config.LOG_LEVEL, base: { service: 'tally' } });
}
