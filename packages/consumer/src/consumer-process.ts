// A consumer as its own process (docker-compose runs one per container): read the configuration, open
// the warehouse (migrating it) and the record log, serve the admin port (readiness, metrics), consume
// until SIGTERM/SIGINT. No record stops it (see batch-loop.ts); it exits 1 only if the record log itself
// fails. With the embedded warehouse (no CLICKHOUSE_URL) the process holds the chDB directory, so it cannot
// run beside `npm start` on the same data directory.
import { loadConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import { buildAdmin } from '@tally/service';
import { migrate, openWarehouse, type Warehouse, withRetry } from '@tally/warehouse';
import { type Logger, pino } from 'pino';
import type { BatchOptions, RunningBatchLoop } from './batch-loop.ts';
import { ConsumerMetrics } from './metrics.ts';

export interface ConsumerDeps {
  log: RecordLog;
  warehouse: Warehouse;
  batch: BatchOptions;
  logger: Logger;
  metrics: ConsumerMetrics;
}

export async function runConsumerProcess(
  service: string,
  start: (deps: ConsumerDeps) => RunningBatchLoop,
): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.LOG_LEVEL, base: { service } });
  const warehouse = withRetry(await openWarehouse(config));
  await migrate(warehouse);
  const log = await openRecordLog(config, {
    onWarning: (message, error) => logger.warn({ err: error }, message),
  });
  const metrics = new ConsumerMetrics();
  const consumer = start({
    log,
    warehouse,
    batch: { maxRecords: config.CONSUMER_BATCH_SIZE, maxWaitMs: config.CONSUMER_BATCH_WAIT_MS },
    logger,
    metrics,
  });
  const admin = buildAdmin({
    health: () => log.health(),
    metrics: () => metrics.registry.metrics(),
    logger,
  });
  const adminUrl = await admin.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
  logger.info({ admin: adminUrl }, `${service} started`);

  let stopping = false;
  const shutDown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await consumer.stop(); // the batch in hand lands and commits first
    await admin.close();
    await log.close();
    await warehouse.close();
    process.exit(code);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutDown(0));
  consumer.done.catch((error: unknown) => {
    logger.fatal({ error: (error as Error)?.name }, `${service} failed: the record log failed`);
    void shutDown(1);
  });
}
