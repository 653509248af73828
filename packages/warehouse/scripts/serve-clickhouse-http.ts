// Serves ClickHouse's HTTP interface over a chDB data directory on 127.0.0.1, as its own process: what
// the integration tests run the ClickHouse backend (@clickhouse/client) against when no ClickHouse
// server is given (CLICKHOUSE_URL). Prints `CLICKHOUSE_URL=<url>` once listening; stops on SIGTERM.
//   node --import tsx packages/warehouse/scripts/serve-clickhouse-http.ts <data-dir> [port]
import { serveClickHouseHttp } from '../src/index.ts';

const [dataDir, port = '0'] = process.argv.slice(2);
if (!dataDir) {
  process.stderr.write('usage: serve-clickhouse-http.ts <data-dir> [port]\n');
  process.exit(2);
}
const server = await serveClickHouseHttp({ dataDir, port: Number(port) });
process.stdout.write(`CLICKHOUSE_URL=${server.url}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
