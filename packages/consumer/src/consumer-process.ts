// A consumer as its own process (docker-compose runs one per container), through the service runner:
// open the warehouse (migrating it; when it is away or refuses, at the first batch instead: see
// warehouse-when-ready.ts) and the record log, serve the admin port (readiness: the log's health and
// whether the group makes progress, progress.ts; metrics), consume until SIGTERM/SIGINT. No record stops
// it (see batch-loop.ts); it exits 1 only if the record log itself fails. With the embedded warehouse (no
// CLICKHOUSE_URL) the process holds the chDB directory, so it cannot run beside `npm start` on the same
// data directory.
import type { TallyConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import { allHealthy, buildAdmin, runService, startOrUnwind, watchLogSettings } from '@tally/service';
import {
  openWarehouse,
  type Warehouse,
  type WarehouseDamage,
  warehouseDamage,
  withRetry,
} from '@tally/warehouse';
import type { BatchOptions, RunningBatchLoop } from './batch-loop.ts';
import type { ConsumerLogger } from './logger.ts';
import { ConsumerMetrics } from './metrics.ts';
import { ConsumerProgress } from './progress.ts';
import { warehouseWhenReady } from './warehouse-when-ready.ts';

/** What a consumer's start function takes (startAnalyticsConsumer, startRevenueConsumer). */
export interface ConsumerOptions {
  log: RecordLog;
  warehouse: Warehouse;
  batch: BatchOptions;
  logger?: ConsumerLogger | undefined;
  metrics?: ConsumerMetrics | undefined;
  /** The consumer group (default: the consumer's own). */
  group?: string;
  /** Told of the group's batches, so that the process's readiness says when it is stalled. */
  progress?: ConsumerProgress | undefined;
}

export function runConsumerProcess(
  service: string,
  start: (options: ConsumerOptions) => RunningBatchLoop,
  /** The consumer's batch wait, when not CONSUMER_BATCH_WAIT_MS (the revenue consumer's own setting). */
  batchWaitMs: (config: TallyConfig) => number = (config) => config.CONSUMER_BATCH_WAIT_MS,
): Promise<void> {
  return runService({
    name: service,
    start: (config, logger) =>
      // Closed in the reverse order of these steps: the consumer (the batch in hand lands and commits
      // first), its progress, the admin server, the log, the warehouse.
      startOrUnwind(async (resources) => {
        const warehouse = resources.add(
          withRetry(
            await warehouseWhenReady(
              () => openWarehouse(config),
              { kind: config.backends.warehouse.kind, database: config.CLICKHOUSE_DATABASE },
              logger,
            ),
          ),
          (opened) => opened.close(),
        );
        // Damaged parts detached at start: records missing until `tally warehouse reland` (not ready, said).
        const damage = await warehouseDamage(warehouse).catch((error: unknown) => {
          logger.warn(
            { err: error },
            'the warehouse did not list its detached parts: lost records cannot be told',
          );
          return { ok: true, parts: [] } as WarehouseDamage;
        });
        if (!damage.ok) logger.error({ damaged_parts: damage.parts }, damage.detail);
        const log = resources.add(
          await openRecordLog(config, {
            onWarning: (message, error) =>
              error === undefined ? logger.warn(message) : logger.warn({ err: error }, message),
          }),
          (opened) => opened.close(),
        );
        const metrics = new ConsumerMetrics();
        const progress = new ConsumerProgress({ stallMs: config.CONSUMER_STALL_MS, log, logger });
        metrics.watch(progress);
        watchLogSettings(metrics.registry, log);
        const admin = resources.add(
          buildAdmin({
            health: () =>
              allHealthy([
                () => log.health(),
                () => progress.health(),
                async () => (damage.ok ? { ok: true } : { ok: false, detail: damage.detail }),
              ]),
            metrics: () => metrics.registry.metrics(),
            logger,
          }),
          (server) => server.close(),
        );
        resources.add(progress, (started) => started.stop());
        const consumer = resources.add(
          start({
            log,
            warehouse,
            batch: { maxRecords: config.CONSUMER_BATCH_SIZE, maxWaitMs: batchWaitMs(config) },
            logger,
            metrics,
            progress,
          }),
          (running) => running.stop(),
        );
        progress.start();
        const adminUrl = await admin.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
        logger.info({ admin: adminUrl }, `${service} started`);
        return {
          endpoints: { adminUrl },
          // The loop ends on its own only if the record log fails (no record stops it).
          failed: consumer.done.then(() => new Promise<never>(() => {})),
          close: () => resources.close(),
        };
      }),
  });
}
