// The warehouse on a ClickHouse server, through the official client (@clickhouse/client, HTTP).
// CLICKHOUSE_URL may carry credentials (http://user:password@host:8123). The database is created when
// missing, through a client without a database (ClickHouse refuses requests naming an unknown one).
// On a cluster (CLICKHOUSE_CLUSTER) the database is created ON CLUSTER and every request carries
// CLUSTER_SETTINGS: inserts through the Distributed tables are durable before they resolve, so before a
// consumer commits its position in the log.
// Query parameters longer than the client's threshold (4 KiB) go in the body as multipart/form-data
// fields instead of the URL, which servers and proxies bound (16 KiB for Tally's own HTTP interface, as
// for Node's; 1 MiB for ClickHouse; less for many proxies); a list that could pass ClickHouse's bound on
// one field (128 KiB) is cut by its callers (parameter-lists.ts).
// The client turns an HTTP error answer that is not ClickHouse's into a bare Error without its status,
// indistinguishable from a reset connection, so the status of each request's answer is read from Node's
// `http.client.response.finish` diagnostics channel, by the request's query id: a 4xx that is not the
// engine's is the warehouse's failure (httpAnswerError), not an outage.
import { randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { engineError, httpAnswerError, WarehouseError, WarehouseUnavailableError } from '../errors.ts';
import { insertBlocks } from '../insert-blocks.ts';
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
    use_multipart_params_auto: true,
    // Failures reach the caller as WarehouseErrors; the client's own logging would print them twice.
    log: { level: ClickHouseLogLevel.OFF },
  };
  const bootstrap = createClient(common);
  try {
    const onCluster = cluster ? ` ON CLUSTER ${cluster}` : '';
    await call((query_id) =>
      bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}${onCluster}`, query_id }),
    );
  } finally {
    await bootstrap.close();
  }
  return new ClickHouseWarehouse(createClient({ ...common, database }), database, cluster);
}

/** The answers' statuses of the requests in flight, by query id (only while their call runs). */
const answers = new Map<string, { status: number; engine: boolean } | null>();
subscribe('http.client.response.finish', (message) => {
  if (answers.size === 0) return;
  const { request, response } = message as { request: ClientRequest; response: IncomingMessage };
  const id = new URL(request.path, 'http://h').searchParams.get('query_id');
  if (id === null || !answers.has(id)) return;
  const status = response.statusCode ?? 0;
  answers.set(id, { status, engine: response.headers['x-clickhouse-exception-code'] !== undefined });
});

/**
 * Network failures are retryable; server errors carry their code (retryable per code); an HTTP error
 * answer that is not the engine's is told by its status (httpAnswerError).
 */
function toWarehouseError(
  error: unknown,
  answer?: { status: number; engine: boolean } | null | undefined,
): WarehouseError {
  if (error instanceof WarehouseError) return error;
  if (error instanceof ClickHouseError) {
    return engineError(error.message, Number(error.code));
  }
  const message = String((error as Error)?.message ?? error);
  if (answer && !answer.engine && answer.status >= 400) return httpAnswerError(answer.status, message);
  return new WarehouseUnavailableError(`ClickHouse unreachable: ${message}`, { cause: error });
}

/** Runs one request of the client under its own query id, so that its answer's status can be told. */
async function call<T>(operation: (queryId: string) => Promise<T>): Promise<T> {
  const queryId = randomUUID();
  answers.set(queryId, null);
  try {
    return await operation(queryId);
  } catch (error) {
    throw toWarehouseError(error, answers.get(queryId));
  } finally {
    answers.delete(queryId);
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
    return call(async (query_id) => {
      // The server runs queries side by side: this one starts as it is sent.
      options?.onStart?.();
      const result = await this.#client.query({
        query: sql,
        query_params: params,
        format: 'JSONEachRow',
        query_id,
      });
      return result.json<T>();
    });
  }

  queryText(sql: string): Promise<string> {
    return call(async (query_id) => {
      // exec sends the statement as it is (its FORMAT clause included) and streams the raw answer.
      const { stream } = await this.#client.exec({ query: sql, query_id });
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks).toString('utf8');
    });
  }

  command(sql: string, params?: QueryParams): Promise<void> {
    return call(async (query_id) => {
      await this.#client.command({ query: sql, query_params: params, query_id });
    });
  }

  async insert(table: string, rows: readonly Row[]): Promise<void> {
    // A block per statement, at most PARTITIONS_PER_INSERT partitions each (insert-blocks.ts).
    for (const block of insertBlocks(table, rows)) {
      await call(async (query_id) => {
        await this.#client.insert({ table, values: block, format: 'JSONEachRow', query_id });
      });
    }
  }

  async ping(): Promise<void> {
    const result = await this.#client.ping();
    if (!result.success) throw toWarehouseError(result.error);
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
