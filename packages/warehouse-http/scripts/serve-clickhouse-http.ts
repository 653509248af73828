// Serves ClickHouse's HTTP interface over a chDB data directory on 127.0.0.1, as its own process: what
// the integration tests run ClickHouse clients against when no ClickHouse server is given
// (CLICKHOUSE_URL). Users: `default` with no password (a writer, as on a fresh ClickHouse server), and,
// with --analyst-password, `analyst` (readonly=1), each with the limits the configuration gives
// (WAREHOUSE_WRITER_*, WAREHOUSE_ANALYST_*). Prints `CLICKHOUSE_URL=<url>` once listening; stops on
// SIGTERM (ending the queries still running).
//   node --import tsx packages/warehouse-http/scripts/serve-clickhouse-http.ts <data-dir> [port] [--analyst-password=<p>]
import { parseArgs } from 'node:util';
import { loadConfig } from '@tally/config';
import { analystLimits, serveClickHouseHttp, type WarehouseHttpUser, writerLimits } from '../src/index.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { 'analyst-password': { type: 'string' } },
});
const [dataDir, port = '0'] = positionals;
if (!dataDir) {
  process.stderr.write('usage: serve-clickhouse-http.ts <data-dir> [port] [--analyst-password=<password>]\n');
  process.exit(2);
}
const config = loadConfig();
const users: WarehouseHttpUser[] = [
  { name: 'default', password: '', readonly: 0, limits: writerLimits(config) },
];
const analystPassword = values['analyst-password'];
if (analystPassword) {
  users.push({ name: 'analyst', password: analystPassword, readonly: 1, limits: analystLimits(config) });
}
const server = await serveClickHouseHttp({
  dataDir,
  port: Number(port),
  users,
  onInternalError: (error) => process.stderr.write(`internal error: ${(error as Error).stack ?? error}\n`),
});
process.stdout.write(`CLICKHOUSE_URL=${server.url}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
