// Starting the HTTP interface, with the server's modules (server.ts: chDB's native library, lz4-napi,
// fzstd) loaded on the first call: a process that only reads the published endpoint (the CLI, a dashboard
// of its own) or runs on a ClickHouse server (CLICKHOUSE_URL) never loads them.
import type { ClickHouseHttpInterface, ClickHouseHttpInterfaceOptions } from './server.ts';

/** Serves ClickHouse's HTTP interface over a chDB data directory (see server.ts). */
export async function serveClickHouseHttp(
  options: ClickHouseHttpInterfaceOptions,
): Promise<ClickHouseHttpInterface> {
  const { serveClickHouseHttp: serve } = await import('./server.ts');
  return serve(options);
}
