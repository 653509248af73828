// The revenue consumer as its own process: read the configuration, open the record log and the
// warehouse (migrating it), consume until SIGTERM/SIGINT. With the embedded warehouse (no
// CLICKHOUSE_URL) it holds the chDB directory, so it cannot run beside `npm start` on the same data dir.
import { loadConfig } from '@tally/config';
import { openRecordLog } from '@tally/log';
import { migrate, openWarehouse, withRetry } from '@tally/warehouse';
import { pino } from 'pino';
import { startRevenueConsumer } from './consumer.ts';

const config = loadConfig();
const logger = pino({ level: config.LOG_LEVEL, base: { service: 'revenue-consumer' } });
const warehouse = withRetry(await openWarehouse(config));
await migrate(warehouse);
const log = await openRecordLog(config);
const consumer = startRevenueConsumer({
  log,
  warehouse,
  batch: { maxRecords: config.CONSUMER_BATCH_SIZE, maxWaitMs: config.CONSUMER_BATCH_WAIT_MS },
  logger,
});
logger.info('revenue consumer started');

async function shutDown(code: number) {
  await consumer.stop();
  await log.close();
  await warehouse.close();
  process.exit(code);
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutDown(0));
consumer.done.catch((error: unknown) => {
  logger.fatal({ err: error }, 'revenue consumer failed');
  void shutDown(1);
});
