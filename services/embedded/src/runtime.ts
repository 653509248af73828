// startTally: the whole pipeline in one process on embedded defaults, as `npm start` runs it: the gateway
// in worker threads of its own (GATEWAY_WORKERS event loops sharing the port; one thread is the embedded
// log's writer itself, several append through MessagePorts to the main thread's log, the one writer, whose
// group commit takes all their records; on Kafka each has its producer), both consumers in the main thread
// reading the same log through the RecordLog interface (never on the ingestion threads), the warehouse (chDB in TALLY_DATA_DIR/warehouse,
// or a ClickHouse server when CLICKHOUSE_URL is set), and the admin server, whose metrics are the
// consumers' and the gateway thread's together.
// chDB lets one process open its data directory, so this process also serves ClickHouse's HTTP interface
// over it (on WAREHOUSE_HTTP_HOST, loopback by default) for a writer and a read-only analyst user, and
// publishes where and with which credentials (TALLY_DATA_DIR/warehouse-http.json): that is how
// `tally sql`, the reports and analysts' tools reach the warehouse while it runs.
// The dashboard (services/dashboard) runs here too, on DASHBOARD_PORT, reading the warehouse through a
// connection of its own (chDB admits several connections in the process that holds the directory).
import { resolve } from 'node:path';
import { startAnalyticsConsumer } from '@tally/analytics-consumer';
import type { TallyConfig } from '@tally/config';
import { ConsumerMetrics, ConsumerProgress } from '@tally/consumer';
import { type RunningDashboard, startDashboard } from '@tally/dashboard';
import { type GatewayWorkers, gatewayLoops, startGatewayWorkers } from '@tally/gateway';
import { openRecordLog, type RecordLog } from '@tally/log';
import { startRevenueConsumer } from '@tally/revenue-consumer';
import { allHealthy, buildAdmin, mergedMetrics, watchLogSettings } from '@tally/service';
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
import type { FastifyInstance } from 'fastify';
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
  const dataDir = resolve(config.TALLY_DATA_DIR);
  // The warehouse first: if another process holds the chDB directory, fail before taking any port.
  const warehouse = withRetry(await openWarehouse({ ...config, TALLY_DATA_DIR: dataDir }), {
    onRetry: (error, attempt) => logger.warn({ err: error, attempt }, 'warehouse operation failed; retrying'),
  });
  let http: ClickHouseHttpInterface | null = null;
  let gateway: GatewayWorkers | null = null;
  let admin: FastifyInstance | null = null;
  let adminUrl = '';
  let dashboard: RunningDashboard | null = null;
  let dashboardWarehouse: Warehouse | null = null;
  const metrics = new ConsumerMetrics();
  // Whether the consumers make progress: the admin server's readiness, the metrics, the health view.
  let progress: ConsumerProgress | null = null;
  // The consumers' record log. One gateway thread opens its own instance of it, as the writer; several
  // append to this one, which is then the writer.
  const { loops, note } = gatewayLoops(config);
  if (note) logger[note.level](note.message);
  const holdsWriter = loops > 1 && !(config.KAFKA_BROKERS && config.SCHEMA_REGISTRY_URL);
  let log: RecordLog | null = null;
  try {
    log = await openRecordLog(
      { ...config, TALLY_DATA_DIR: dataDir },
      {
        onWarning: (message: string, error: unknown) =>
          error === undefined ? logger.warn(message) : logger.warn({ err: error }, message),
        ...(holdsWriter && { writer: true }),
      },
    );
    const consumersLog = log;
    progress = new ConsumerProgress({
      stallMs: config.CONSUMER_STALL_MS,
      log: consumersLog,
      logger: logger.child({ component: 'consumers' }),
    });
    metrics.watch(progress);
    watchLogSettings(metrics.registry, consumersLog);
    const consumerProgress = progress;
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
    if (!config.CLICKHOUSE_URL) {
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
    gateway = await startGatewayWorkers(
      { ...config, TALLY_DATA_DIR: dataDir },
      // The consumers' log compared the Kafka topics' settings already: the gateway threads need not.
      { count: loops, checkLogSettings: false, ...(holdsWriter && { appendLog: consumersLog }) },
    );
    const threads = gateway;
    admin = buildAdmin({
      health: () =>
        allHealthy([
          () => threads.health(),
          () => consumersLog.health(),
          () => consumerProgress.health(),
          warehouseHealth,
        ]),
      metrics: async () => mergedMetrics([metrics.registry], await threads.metrics()),
      logger,
    });
    adminUrl = await admin.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
    // The dashboard's own connection: its reads never queue behind the consumers' statements.
    dashboardWarehouse = await openWarehouse({ ...config, TALLY_DATA_DIR: dataDir });
    dashboard = await startDashboard(
      // The port the gateway got (PORT may be 0), for the install snippet's address.
      { ...config, TALLY_DATA_DIR: dataDir, PORT: Number(new URL(threads.url).port) },
      {
        warehouse: dashboardWarehouse,
        // As the consumers' lines name their consumer (a second `service` key would repeat the base's).
        logger: logger.child({ component: 'dashboard' }),
        log: consumersLog,
        consumers: consumerProgress,
      },
    );
  } catch (error) {
    // Nothing of a failed start stays behind: no published endpoint, no lock, no open port.
    await dashboard?.close();
    await dashboardWarehouse?.close();
    await gateway?.close();
    await admin?.close();
    await log?.close();
    if (http) {
      unpublishEndpoint(dataDir);
      await http.close();
    }
    await warehouse.close();
    throw error;
  }
  const consumersLog = log;
  const consumerProgress = progress as ConsumerProgress;

  const batch = { maxRecords: config.CONSUMER_BATCH_SIZE, maxWaitMs: config.CONSUMER_BATCH_WAIT_MS };
  const analytics = startAnalyticsConsumer({
    log: consumersLog,
    warehouse,
    batch,
    logger: logger.child({ consumer: 'analytics' }),
    metrics,
    progress: consumerProgress,
  });
  const revenue = startRevenueConsumer({
    log: consumersLog,
    warehouse,
    batch,
    logger: logger.child({ consumer: 'revenue' }),
    metrics,
    progress: consumerProgress,
  });
  consumerProgress.start();
  const failed = Promise.race([analytics.done, revenue.done, gateway.failed]).then(
    () => new Promise<never>(() => {}),
  );
  failed.catch(() => {}); // observed by the caller; never an unhandled rejection

  let closing: Promise<void> | null = null;
  const running = gateway;
  const adminServer = admin;
  const runningDashboard = dashboard;
  const ownWarehouse = dashboardWarehouse;
  return {
    gateway: { url: running.url, count: running.count },
    adminUrl,
    warehouseUrl: http?.url ?? null,
    dashboardUrl: runningDashboard.url,
    failed,
    close() {
      closing ??= (async () => {
        await runningDashboard.close();
        await ownWarehouse.close();
        await running.close(); // no new records; in-flight appends finish
        await Promise.all([analytics.stop(), revenue.stop()]); // the batches in hand land and commit
        await consumerProgress.stop();
        await adminServer.close();
        await consumersLog.close();
        if (http) {
          unpublishEndpoint(dataDir);
          await http.close();
        }
        await warehouse.close();
      })();
      return closing;
    },
  };
}

function defaultLogger(config: TallyConfig): Logger {
  return pino({ level: config.LOG_LEVEL, base: { service: 'tally' } });
}
