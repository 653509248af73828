// A consumer as its own process (docker-compose runs one per container): read the configuration, open
// the warehouse (migrating it) and the record log, consume until SIGTERM/SIGINT, exit 1 if the consumer
// stops on a failure it cannot retry. With the embedded warehouse (no CLICKHOUSE_URL) the process holds
// the chDB directory, so it cannot run beside `npm start` on the same data directory.
import { loadConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import { type Logger, pino } from 'pino';
import type { Warehouse } from './index.ts';
import { openWarehouse } from './index.ts';
import type { BatchOptions, RunningBatchLoop } from './landing.ts';
import { migrate } from './migrations.ts';
import { withRetry } from './retry.ts';

export interface ConsumerDeps {
  log: RecordLog;
  warehouse: Warehouse;
  batch: BatchOptions;
  logger: Logger;
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
  const consumer = start({
    log,
    warehouse,
    batch: { maxRecords: config.CONSUMER_BATCH_SIZE, maxWaitMs: config.CONSUMER_BATCH_WAIT_MS },
    logger,
  });
  logger.info(`${service} started`);

  let stopping = false;
  const shutDown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await consumer.stop(); // the batch in hand lands and commits first
    await log.close();
    await warehouse.close();
    process.exit(code);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutDown(0));
  consumer.done.catch((error: unknown) => {
    logger.fatal({ err: error }, `${service} failed`);
    void shutDown(1);
  });
}
