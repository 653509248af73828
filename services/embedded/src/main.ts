// The all-in-one process of `npm start`: read the configuration, start gateway, consumers and warehouse,
// shut down cleanly on SIGTERM/SIGINT, and stop (exit 1) if a consumer fails in a way it cannot retry.
import { loadConfig } from '@tally/config';
import { pino } from 'pino';
import { startTally } from './runtime.ts';

const config = loadConfig();
const logger = pino({ level: config.LOG_LEVEL, base: { service: 'tally' } });
const tally = await startTally(config, logger);
const using = config.REDIS_URL ? 'Redis' : `${config.TALLY_DATA_DIR} (embedded)`;
const warehouse = config.CLICKHOUSE_URL
  ? `ClickHouse (${new URL(config.CLICKHOUSE_URL).host}, database ${config.CLICKHOUSE_DATABASE})`
  : `chDB in ${config.TALLY_DATA_DIR}/warehouse, SQL over HTTP at ${tally.warehouseUrl} (credentials in ${config.TALLY_DATA_DIR}/warehouse-http.json)`;
process.stdout.write(
  `Tally gateway listening on ${tally.gateway.url}/api/ingest (admin: ${tally.adminUrl}); tokens and state: ${using}\n` +
    `Warehouse: ${warehouse}\n` +
    'Create a token with:  npx tally tokens create --project my-site --kind public\n' +
    'Query with:           npx tally sql "SELECT count() FROM pageviews"\n',
);

let stopping = false;
function shutDown(code: number) {
  if (stopping) return;
  stopping = true;
  tally.close().then(
    () => process.exit(code),
    (error: unknown) => {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    logger.info({ signal }, 'shutting down');
    shutDown(0);
  });
}
tally.failed.catch((error: unknown) => {
  logger.fatal(
    { err: error },
    'a consumer or the gateway thread stopped on an error it cannot retry; shutting down',
  );
  shutDown(1);
});
