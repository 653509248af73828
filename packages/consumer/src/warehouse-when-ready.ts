// The warehouse of a consumer process, opened and migrated before the consumer starts, or, when the
// warehouse is away or refuses the requests (an outage, an HTTP answer that is not ClickHouse's), at its
// first use and again at each use after a failed attempt. So a consumer whose warehouse is down or
// misrouted when it starts keeps running: its batches fail and are retried like any other failure of the
// warehouse, and its readiness says it is stalled and why (progress.ts), instead of a process that exits
// and is restarted without ever saying. A failure that waiting cannot mend (the embedded warehouse's
// directory held by another process, a migration changed after it was applied) still fails the start.
import {
  migrate,
  type QueryOptions,
  type QueryParams,
  type Warehouse,
  WarehouseError,
} from '@tally/warehouse';
import type { ConsumerLogger } from './logger.ts';

/** Whether a failure to open the warehouse may pass later on its own (or once someone mends what is in front of it). */
function passing(error: unknown): boolean {
  return error instanceof WarehouseError && (error.retryable || error.httpStatus !== undefined);
}

export async function warehouseWhenReady(
  open: () => Promise<Warehouse>,
  shape: { kind: Warehouse['kind']; database: string },
  logger?: ConsumerLogger | undefined,
): Promise<Warehouse> {
  const prepare = async () => {
    const warehouse = await open();
    try {
      await migrate(warehouse);
    } catch (error) {
      await warehouse.close().catch(() => {});
      throw error;
    }
    return warehouse;
  };
  try {
    return await prepare();
  } catch (error) {
    if (!passing(error)) throw error;
    logger?.error(
      {
        error: (error as Error).name,
        message: (error as Error).message,
        http_status: (error as WarehouseError).httpStatus,
      },
      'the warehouse cannot be opened yet; the consumer starts and tries again with each batch',
    );
  }
  let opening: Promise<Warehouse> | null = null;
  let closed = false;
  const ready = (): Promise<Warehouse> => {
    if (closed) return Promise.reject(new WarehouseError('the warehouse is closed'));
    opening ??= prepare().catch((error: unknown) => {
      opening = null;
      throw error;
    });
    return opening;
  };
  return {
    kind: shape.kind,
    database: shape.database,
    query: async <T>(sql: string, params?: QueryParams, options?: QueryOptions) =>
      (await ready()).query<T>(sql, params, options),
    queryText: async (sql) => (await ready()).queryText(sql),
    command: async (sql, params) => (await ready()).command(sql, params),
    insert: async (table, rows) => (await ready()).insert(table, rows),
    ping: async () => (await ready()).ping(),
    async close() {
      closed = true;
      const current = opening;
      opening = null;
      const warehouse = await current?.catch(() => null);
      await warehouse?.close();
    },
  };
}
