// The warehouse's backends, each loaded only when used: a ClickHouse server (@clickhouse/client) when the
// configuration chose one (CLICKHOUSE_URL), else the embedded chDB under the data directory's warehouse/
// (chDB's native library, ~190 MiB resident once loaded). A process pays for the one it opens: a consumer
// given CLICKHOUSE_URL never loads chDB, `npm start` on chDB never loads @clickhouse/client.
// CLICKHOUSE_CLUSTER names the server's cluster, if any. This is the way in for the process that holds the
// warehouse; those beside it (the CLI, a dashboard of its own) reach it through what that process publishes
// (reachWarehouse in @tally/warehouse-http). Nothing else in the package imports a backend's
// module (index.ts re-exports these loaders and the backends' types only), so importing @tally/warehouse
// loads neither.
import type { TallyConfig } from '@tally/config';
import type { ChdbWarehouseOptions } from './chdb/chdb-warehouse.ts';
import type { ClickHouseWarehouseOptions } from './clickhouse/clickhouse-warehouse.ts';
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

/** Where the embedded warehouse keeps its data. */
export function embeddedWarehouseDir(tallyDataDir: string): string {
  return `${tallyDataDir.replace(/\/+$/, '')}/warehouse`;
}
