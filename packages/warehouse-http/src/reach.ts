// How a process beside the warehouse's holder reaches it (the CLI, a dashboard of its own): chDB lets one
// process open its data directory, so while `npm start` holds it, the others go through the query endpoint
// it publishes (endpoint.ts); without one, or when the published one is stale, the directory itself.
import {
  openClickHouseWarehouse,
  openWarehouse,
  type Warehouse,
  type WarehouseConfig,
  WarehouseLockedError,
} from '@tally/warehouse';
import { endpointUrl, readPublishedEndpoint } from './endpoint.ts';

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
