// How the CLI reaches the warehouse: the ClickHouse server when CLICKHOUSE_URL is set; else, when a
// running Tally process holds the embedded warehouse (chDB admits one process per data directory), the
// HTTP interface that process published in TALLY_DATA_DIR; else the chDB directory itself.
import { resolve } from 'node:path';
import type { TallyConfig } from '@tally/config';
import {
  embeddedWarehouseDir,
  openChdbWarehouse,
  openClickHouseWarehouse,
  type Warehouse,
  WarehouseLockedError,
} from '@tally/warehouse';
import { endpointUrl, readPublishedEndpoint } from '@tally/warehouse-http';

export async function openWarehouseForCli(config: TallyConfig): Promise<Warehouse> {
  const database = config.CLICKHOUSE_DATABASE;
  if (config.CLICKHOUSE_URL) {
    return openClickHouseWarehouse({
      url: config.CLICKHOUSE_URL,
      database,
      cluster: config.CLICKHOUSE_CLUSTER,
    });
  }
  const dataDir = resolve(config.TALLY_DATA_DIR);
  const endpoint = readPublishedEndpoint(dataDir);
  if (endpoint) {
    const remote = await openClickHouseWarehouse({ url: endpointUrl(endpoint), database }).catch(() => null);
    if (remote) return remote;
    // The file outlived its process (killed; its pid reused): the directory is free, open it below.
  }
  try {
    return await openChdbWarehouse({ dataDir: embeddedWarehouseDir(dataDir), database });
  } catch (error) {
    if (error instanceof WarehouseLockedError) {
      throw new Error(
        `${error.message}, and it publishes no query endpoint in ${dataDir} (npm start does): ` +
          'stop that process first.',
      );
    }
    throw error;
  }
}

/** Opens the warehouse, runs `work`, closes it. */
export async function withWarehouse<T>(config: TallyConfig, work: (w: Warehouse) => Promise<T>): Promise<T> {
  const warehouse = await openWarehouseForCli(config);
  try {
    return await work(warehouse);
  } finally {
    await warehouse.close();
  }
}
