// How the CLI reaches the warehouse: as every process beside the warehouse's holder does (reachWarehouse in
// @tally/warehouse-http): the ClickHouse server when CLICKHOUSE_URL is set; else, when a running Tally process
// holds the embedded warehouse, the HTTP interface that process published in the data directory; else the
// chDB directory itself.
import type { TallyConfig } from '@tally/config';
import type { Warehouse } from '@tally/warehouse';
import { reachWarehouse } from '@tally/warehouse-http';

/** Opens the warehouse, runs `work`, closes it. */
export async function withWarehouse<T>(config: TallyConfig, work: (w: Warehouse) => Promise<T>): Promise<T> {
  const warehouse = await reachWarehouse(config);
  try {
    return await work(warehouse);
  } finally {
    await warehouse.close();
  }
}
