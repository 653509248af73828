// `tally warehouse credentials [--json]`: where the running Tally process serves ClickHouse's HTTP
// interface over its embedded warehouse, and the users to connect with: `analyst` (read-only, for BI
// tools and notebooks) and the writer the CLI uses. Read from what the process published in
// TALLY_DATA_DIR (owner-only files); nothing is printed when no process serves the interface.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { readPublishedEndpoint } from '@tally/warehouse-http';
import { UsageError } from './usage-error.ts';

export async function runWarehouse(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  if (positionals[0] !== 'credentials' || positionals.length !== 1) {
    throw new UsageError('warehouse needs "credentials [--json]" or "reland [--json]"');
  }
  if (config.backends.warehouse.kind === 'clickhouse') {
    throw new Error(
      "the warehouse is the ClickHouse server of CLICKHOUSE_URL: its users and passwords are that server's",
    );
  }
  const { dataDir } = config;
  const endpoint = readPublishedEndpoint(dataDir);
  if (!endpoint) {
    throw new Error(
      `no running Tally process serves the warehouse's HTTP interface for ${dataDir} (npm start does, on ` +
        'WAREHOUSE_HTTP_HOST:WAREHOUSE_HTTP_PORT)',
    );
  }
  const database = config.CLICKHOUSE_DATABASE;
  const { url, analyst } = endpoint;
  const writer = { user: endpoint.user, password: endpoint.password };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ url, database, analyst, writer })}\n`);
    return 0;
  }
  const { hostname, port } = new URL(url);
  process.stdout.write(
    `ClickHouse HTTP interface of the running Tally (pid ${endpoint.pid}): ${url}, database ${database}\n\n` +
      `read-only, for analysts and BI tools:  user ${analyst.user}  password ${analyst.password}\n` +
      `writer (the tally CLI, migrations):    user ${writer.user}  password ${writer.password}\n\n` +
      `  curl -u '${analyst.user}:${analyst.password}' '${url}/?database=${database}&query=SELECT+count()+FROM+pageviews'\n` +
      `  clickhouse_connect.get_client(host='${hostname}', port=${port}, username='${analyst.user}', ` +
      `password='${analyst.password}', database='${database}')\n`,
  );
  return 0;
}
