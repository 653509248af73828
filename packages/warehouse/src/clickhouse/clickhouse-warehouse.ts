// The warehouse on a ClickHouse server, through the official client (@clickhouse/client, HTTP).
// CLICKHOUSE_URL may carry credentials (http://user:password@host:8123). The database is created when
// missing, through a client without a database (ClickHouse refuses requests naming an unknown one).
// On a cluster (CLICKHOUSE_CLUSTER) the database is created ON CLUSTER and every request carries
// CLUSTER_SETTINGS: inserts through the Distributed tables are durable before they resolve, so before a
// consumer commits its position in the log.
import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { engineError, WarehouseError, WarehouseUnavailableError } from '../errors.ts';
import {
  checkClusterName,
  checkDatabaseName,
  OUTPUT_SETTINGS,
  type QueryOptions,
  type QueryParams,
  type Row,
  type Warehouse,
} from '../warehouse.ts';

export interface ClickHouseWarehouseOptions {
  url: string;
  database: string;
  /** The cluster the tables are spread over (CLICKHOUSE_CLUSTER); undefined or '' for one server. */
  cluster?: string | undefined;
  /** Per-request timeout; inserts of a full batch must fit in it. */
  requestTimeoutMs?: number;
}

/**
 * Settings of every request when the warehouse is a cluster:
 * - `distributed_foreground_insert` (formerly `insert_distributed_sync`): an INSERT into a Distributed
 *   table returns once every shard stored its rows, not when they are queued on the receiving node;
 * - `insert_quorum = 'auto'`: and once a majority of each shard's replicas has them (with two replicas,
 *   both), so that a consumer reading back what it just inserted (visits, mrr_movements) finds it on
 *   whichever replica answers;
 * - `distributed_product_mode = 'global'`: a JOIN or IN whose subquery reads a Distributed table (the
 *   views' identity stitching) runs that subquery once and sends its result to the shards, instead of
 *   being refused.
 */
export const CLUSTER_SETTINGS = {
  distributed_foreground_insert: 1,
  insert_quorum: 'auto',
  distributed_product_mode: 'global',
} as const;

export async function openClickHouseWarehouse(options: ClickHouseWarehouseOptions): Promise<Warehouse> {
  const database = checkDatabaseName(options.database);
  const cluster = options.cluster ? checkClusterName(options.cluster) : undefined;
  const common = {
    url: options.url,
    request_timeout: options.requestTimeoutMs ?? 30_000,
    clickhouse_settings: { ...OUTPUT_SETTINGS, ...(cluster ? CLUSTER_SETTINGS : {}) },
    application: 'tally',
    // Failures reach the caller as WarehouseErrors; the client's own logging would print them twice.
    log: { level: ClickHouseLogLevel.OFF },
  };
  const bootstrap = createClient(common);
  try {
    const onCluster = cluster ? ` ON CLUSTER ${cluster}` : '';
    await call(() => bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}${onCluster}` }));
  } finally {
    await bootstrap.close();
  }
  return new ClickHouseWarehouse(createClient({ ...common, database }), database, cluster);
}

/** Network failures are retryable; server errors carry their code (retryable per code). */
function toWarehouseError(error: unknown): WarehouseError {
  if (error instanceof WarehouseError) return error;
  if (error instanceof ClickHouseError) {
    return engineError(error.message, Number(error.code));
  }
  const message = String((error as Error)?.message ?? error);
  return new WarehouseUnavailableError(`ClickHouse unreachable: ${message}`, { cause: error });
}

async function call<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toWarehouseError(error);
  }
}

class ClickHouseWarehouse implements Warehouse {
  readonly kind = 'clickhouse';
  readonly database: string;
  readonly cluster: string | undefined;
  readonly #client: ClickHouseClient;

  constructor(client: ClickHouseClient, database: string, cluster: string | undefined) {
    this.#client = client;
    this.database = database;
    this.cluster = cluster;
  }

  query<T = Row>(sql: string, params?: QueryParams, options?: QueryOptions): Promise<T[]> {
    return call(async () => {
      // The server runs queries side by side: this one starts as it is sent.
      options?.onStart?.();
      const result = await this.#client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      return result.json<T>();
    });
  }

  queryText(sql: string): Promise<string> {
    return call(async () => {
      // exec sends the statement as it is (its FORMAT clause included) and streams the raw answer.
      const { stream } = await this.#client.exec({ query: sql });
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks).toString('utf8');
    });
  }

  command(sql: string, params?: QueryParams): Promise<void> {
    return call(async () => {
      await this.#client.command({ query: sql, query_params: params });
    });
  }

  insert(table: string, rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return call(async () => {
      await this.#client.insert({ table, values: rows as Row[], format: 'JSONEachRow' });
    });
  }

  async ping(): Promise<void> {
    const result = await this.#client.ping();
    if (!result.success) throw toWarehouseError(result.error);
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
