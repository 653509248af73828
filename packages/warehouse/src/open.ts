// Opens the warehouse the configuration names: a ClickHouse server when CLICKHOUSE_URL is set, else the
// embedded chDB under TALLY_DATA_DIR/warehouse. CLICKHOUSE_CLUSTER names the server's cluster, if any.
import { openChdbWarehouse } from './chdb/chdb-warehouse.ts';
import { openClickHouseWarehouse } from './clickhouse/clickhouse-warehouse.ts';
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

/** Where the embedded warehouse keeps its data. */
export function embeddedWarehouseDir(tallyDataDir: string): string {
  return `${tallyDataDir.replace(/\/+$/, '')}/warehouse`;
}
