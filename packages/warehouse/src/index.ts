// The warehouse: where consumers land records and where reports and analysts read them. One small
// interface with one folder per backend, both running the same SQL (schemas/clickhouse):
//   clickhouse/  a ClickHouse server through @clickhouse/client (CLICKHOUSE_URL)
//   chdb/        the embedded engine chDB, in-process, data under TALLY_DATA_DIR/warehouse (the default)
// Cross-cutting behaviour (retries) wraps a backend: see withRetry.
import { openChdbWarehouse } from './chdb/index.ts';
import { openClickHouseWarehouse } from './clickhouse/index.ts';
import { WarehouseError } from './errors.ts';

export {
  type ClickHouseHttpInterface,
  type ClickHouseHttpInterfaceOptions,
  endpointFile,
  endpointUrl,
  type PublishedEndpoint,
  publishEndpoint,
  readPublishedEndpoint,
  serveClickHouseHttp,
  unpublishEndpoint,
  type WarehouseHttpUser,
  warehouseCredentials,
} from './chdb/http-interface.ts';
export { type ChdbWarehouseOptions, openChdbWarehouse } from './chdb/index.ts';
export { type ClickHouseWarehouseOptions, openClickHouseWarehouse } from './clickhouse/index.ts';
export * from './errors.ts';
export * from './migrations.ts';
export * from './record-ids.ts';
export * from './reports/monthly-revenue.ts';
export * from './reports/mrr-movements.ts';
export * from './reports/mrr-table.ts';
export * from './reports/revenue-search.ts';
export * from './reports/traffic.ts';
export * from './retry.ts';

/** Values of `{name:Type}` query parameters. Timestamps travel as milliseconds (numbers), never as Date. */
export type QueryParam = string | number | boolean | null | readonly (string | number)[];
export type QueryParams = Record<string, QueryParam>;

/** A row as the warehouse returns it in JSON: 64-bit integers and decimals come as JSON numbers. */
export type Row = Record<string, unknown>;

export interface Warehouse {
  /** Which engine this is, for messages. */
  readonly kind: 'chdb' | 'clickhouse';
  /** The database every statement runs in (CLICKHOUSE_DATABASE). */
  readonly database: string;
  /** Runs one SELECT (without a FORMAT clause) and returns its rows. */
  query<T = Row>(sql: string, params?: QueryParams): Promise<T[]>;
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

export interface WarehouseSettings {
  CLICKHOUSE_URL?: string | undefined;
  CLICKHOUSE_DATABASE: string;
  TALLY_DATA_DIR: string;
}

/** The warehouse the configuration names: a ClickHouse server when CLICKHOUSE_URL is set, else chDB. */
export async function openWarehouse(settings: WarehouseSettings): Promise<Warehouse> {
  if (settings.CLICKHOUSE_URL) {
    return openClickHouseWarehouse({ url: settings.CLICKHOUSE_URL, database: settings.CLICKHOUSE_DATABASE });
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
