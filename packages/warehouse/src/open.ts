// The warehouse's backends, each loaded only when used: a ClickHouse server (@clickhouse/client) when
// CLICKHOUSE_URL is set, else the embedded chDB under TALLY_DATA_DIR/warehouse (chDB's native library,
// ~190 MiB resident once loaded). A process pays for the one it opens: a consumer given CLICKHOUSE_URL
// never loads chDB, `npm start` on chDB never loads @clickhouse/client. CLICKHOUSE_CLUSTER names the
// server's cluster, if any. Nothing else in the package imports a backend's module (index.ts re-exports
// these loaders and the backends' types only), so importing @tally/warehouse loads neither.
import type { ChdbWarehouseOptions } from './chdb/chdb-warehouse.ts';
import type { ClickHouseWarehouseOptions } from './clickhouse/clickhouse-warehouse.ts';
import { WarehouseError } from './errors.ts';
import type { Warehouse } from './warehouse.ts';

export interface WarehouseSettings {
  CLICKHOUSE_URL?: string | undefined;
  CLICKHOUSE_DATABASE: string;
  CLICKHOUSE_CLUSTER?: string | undefined;
  TALLY_DATA_DIR: string;
}

/** The warehouse the configuration names: a ClickHouse server when CLICKHOUSE_URL is set, else chDB. */
export async function openWarehouse(settings: WarehouseSettings): Promise<Warehouse> {
  if (settings.CLICKHOUSE_URL) {
    return openClickHouseWarehouse({
      url: settings.CLICKHOUSE_URL,
      database: settings.CLICKHOUSE_DATABASE,
      cluster: settings.CLICKHOUSE_CLUSTER,
    });
  }
  if (settings.CLICKHOUSE_CLUSTER) {
    throw new WarehouseError('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: the embedded warehouse is one node');
  }
  return openChdbWarehouse({
    dataDir: embeddedWarehouseDir(settings.TALLY_DATA_DIR),
    database: settings.CLICKHOUSE_DATABASE,
  });
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
