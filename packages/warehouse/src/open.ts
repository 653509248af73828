// The warehouse's backends, each loaded only when used: a ClickHouse server (@clickhouse/client) when the
// configuration chose one (CLICKHOUSE_URL), else the embedded chDB under the data directory's warehouse/
// (chDB's native library, ~190 MiB resident once loaded), and ClickHouse's HTTP interface over chDB (chDB
// again, lz4-napi). A process pays for the one it opens: a consumer given CLICKHOUSE_URL never loads chDB,
// `npm start` on chDB never loads @clickhouse/client. CLICKHOUSE_CLUSTER names the server's cluster, if any.
// Two ways in, one per kind of process: openWarehouse for the one that holds the warehouse, reachWarehouse
// for those beside it (the CLI, a dashboard of its own). Nothing else in the package imports a backend's
// module (index.ts re-exports these loaders and the backends' types only), so importing @tally/warehouse
// loads neither.
import type { TallyConfig } from '@tally/config';
import type { ChdbWarehouseOptions } from './chdb/chdb-warehouse.ts';
import type { ClickHouseHttpInterface, ClickHouseHttpInterfaceOptions } from './chdb/http/server.ts';
import { endpointUrl, readPublishedEndpoint } from './chdb/http-interface.ts';
import type { ClickHouseWarehouseOptions } from './clickhouse/clickhouse-warehouse.ts';
import { WarehouseLockedError } from './errors.ts';
import type { Warehouse } from './warehouse.ts';

/** What opening the warehouse reads of the configuration: the backend it chose, the data directory, the database. */
export type WarehouseConfig = Pick<TallyConfig, 'backends' | 'dataDir' | 'CLICKHOUSE_DATABASE'>;

/**
 * The warehouse the configuration chose, for the process that holds it (the consumers, npm start): the
 * ClickHouse server (on its cluster, if one is named), else the chDB directory itself.
 */
export async function openWarehouse(config: WarehouseConfig): Promise<Warehouse> {
  const backend = config.backends.warehouse;
  const database = config.CLICKHOUSE_DATABASE;
  if (backend.kind === 'clickhouse') {
    return openClickHouseWarehouse({ url: backend.url, database, cluster: backend.cluster });
  }
  return openChdbWarehouse({ dataDir: embeddedWarehouseDir(config.dataDir), database });
}

/**
 * The warehouse as a process beside its holder reaches it (the CLI, a dashboard of its own): the ClickHouse
 * server; else the query endpoint a running Tally publishes in the data directory (chDB lets one process
 * open the directory); else the directory itself, also when the published endpoint is stale (its process
 * was killed and its pid reused, so the file outlived it and nothing answers there). When another process
 * holds the directory and publishes nothing, the error says to stop it.
 */
export async function reachWarehouse(config: WarehouseConfig): Promise<Warehouse> {
  if (config.backends.warehouse.kind === 'clickhouse') return openWarehouse(config);
  const database = config.CLICKHOUSE_DATABASE;
  const endpoint = readPublishedEndpoint(config.dataDir);
  if (endpoint) {
    const remote = await openClickHouseWarehouse({ url: endpointUrl(endpoint), database }).catch(() => null);
    if (remote) return remote;
  }
  try {
    return await openWarehouse(config);
  } catch (error) {
    if (!(error instanceof WarehouseLockedError)) throw error;
    throw new WarehouseLockedError(error.dataDir, {
      pid: error.pid,
      cause: error,
      note: `, and it publishes no query endpoint in ${config.dataDir} (npm start does): stop that process first.`,
    });
  }
}

/** The embedded chDB warehouse (chdb/chdb-warehouse.ts and chDB's native library, loaded on the first call). */
export async function openChdbWarehouse(options: ChdbWarehouseOptions): Promise<Warehouse> {
  const { openChdbWarehouse: open } = await import('./chdb/chdb-warehouse.ts');
  return open(options);
}

/** A ClickHouse server (clickhouse/clickhouse-warehouse.ts and @clickhouse/client, loaded on the first call). */
export async function openClickHouseWarehouse(options: ClickHouseWarehouseOptions): Promise<Warehouse> {
  const { openClickHouseWarehouse: open } = await import('./clickhouse/clickhouse-warehouse.ts');
  return open(options);
}

/** ClickHouse's HTTP interface over a chDB directory (chdb/http/server.ts, chDB, lz4-napi: loaded on the first call). */
export async function serveClickHouseHttp(
  options: ClickHouseHttpInterfaceOptions,
): Promise<ClickHouseHttpInterface> {
  const { serveClickHouseHttp: serve } = await import('./chdb/http/server.ts');
  return serve(options);
}

/** Where the embedded warehouse keeps its data. */
export function embeddedWarehouseDir(tallyDataDir: string): string {
  return `${tallyDataDir.replace(/\/+$/, '')}/warehouse`;
}
