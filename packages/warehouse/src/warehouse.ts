// The warehouse interface every backend implements (chdb/, clickhouse/), and what the backends and the
// SQL files share: the JSON output settings, database names, statement splitting.
import { WarehouseError } from './errors.ts';

/** Values of `{name:Type}` query parameters. Timestamps travel as milliseconds (numbers), never as Date. */
export type QueryParam = string | number | boolean | null | readonly (string | number)[];
export type QueryParams = Record<string, QueryParam>;

/** A row as the warehouse returns it in JSON: 64-bit integers and decimals come as JSON numbers. */
export type Row = Record<string, unknown>;

export interface QueryOptions {
  onStart?: () => void;
}

export interface Warehouse {
  /** Which engine this is, for messages. */
  readonly kind: 'chdb' | 'clickhouse';
  /** The database every statement runs in (CLICKHOUSE_DATABASE). */
  readonly database: string;
  /**
   * The ClickHouse cluster the tables are spread over (CLICKHOUSE_CLUSTER): the migrations then create
   * replicated local tables and Distributed tables ON CLUSTER. Undefined for one node (and always for chDB).
   */
  readonly cluster?: string | undefined;
  /**
   * Bytes of parameter text one list parameter (`IN {ids:Array(String)}`) may have in one statement: the
   * lists a consumer looks up are cut to it (parameter-lists.ts). Undefined: PARAMETER_BYTES, what a
   * ClickHouse server takes over HTTP; chDB binds parameters in this process, with no such limit.
   */
  readonly listParameterBytes?: number | undefined;
  /**
   * Runs one SELECT (without a FORMAT clause) and returns its rows. `onStart` is called when the engine
   * starts on it (chDB runs one statement at a time, so a query may wait behind others first): whatever
   * landed before that moment is in its answer.
   */
  query<T = Row>(sql: string, params?: QueryParams, options?: QueryOptions): Promise<T[]>;
  /**
   * Runs one query in the output format it names (`… FORMAT CSV`, `FORMAT Pretty`, …) and returns the
   * engine's output as text, as `clickhouse-client` would print it.
   */
  queryText(sql: string): Promise<string>;
  /** Runs one statement whose result is not needed (DDL, INSERT … SELECT, OPTIMIZE). */
  command(sql: string, params?: QueryParams): Promise<void>;
  /** Inserts rows (as JSONEachRow) into a table of the database; resolves once the engine has them. */
  insert(table: string, rows: readonly Row[]): Promise<void>;
  /** Resolves when the engine answers; rejects with a WarehouseError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Settings both backends run with, so that they return the same JSON: 64-bit integers (count(),
 * uniqExact()) and decimals as JSON numbers, DateTime64 as text in the column's time zone (UTC).
 */
export const OUTPUT_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
  date_time_output_format: 'simple',
} as const;

const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Database names go into DDL, so only plain identifiers are accepted. */
export function checkDatabaseName(name: string): string {
  if (!DATABASE_NAME.test(name)) {
    throw new WarehouseError(`invalid database name "${name}": use letters, digits and _`);
  }
  return name;
}

/** Cluster names go into DDL (ON CLUSTER, Distributed) too: plain identifiers, as remote_servers names them. */
export function checkClusterName(name: string): string {
  if (!DATABASE_NAME.test(name)) {
    throw new WarehouseError(`invalid cluster name "${name}": use letters, digits and _`);
  }
  return name;
}

/** Splits a file of SQL statements on the `;` that ends a line; `--` comment lines are dropped. */
export function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}
