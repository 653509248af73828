// The columns of a table Tally writes, declared once where the rows are built: a constant naming each
// column and its ClickHouse type (as the migration declares it, without LowCardinality and without the
// precision of DateTime64 and Decimal), from which the row's TypeScript type follows (RowOf). The tables'
// own test (test/warehouse-row-types.test.ts) compares each constant with DESCRIBE TABLE on a migrated
// warehouse, so a column added to a migration and not to its row, or the other way round, fails.

/** How a value of each column type is written (JSONEachRow): times in ms, money as exact decimal text. */
export interface ColumnValues {
  String: string;
  UUID: string;
  Bool: boolean;
  UInt8: number;
  UInt16: number;
  UInt32: number;
  UInt64: number;
  /** ms since the Unix epoch. */
  DateTime64: number;
  'Nullable(DateTime64)': number | null;
  /** Exact decimal text (moneyText, formatMicros). */
  Decimal: string;
  'Nullable(Decimal)': string | null;
  'Nullable(Bool)': boolean | null;
  'Map(String, String)': Record<string, string>;
  'Array(String)': string[];
  'Array(DateTime64)': number[];
  'Array(Map(String, String))': Record<string, string>[];
}

export type ColumnType = keyof ColumnValues;

/** A table's columns as the consumers write them: name → type. */
export type Columns = Readonly<Record<string, ColumnType>>;

/** A row of a table with `columns`, every column present. */
export type RowOf<C extends Columns> = { -readonly [K in keyof C]: ColumnValues[C[K]] };

/**
 * A type as DESCRIBE TABLE gives it, in the terms of ColumnType: `LowCardinality(String)` is `String`,
 * `DateTime64(3, 'UTC')` is `DateTime64`, `Decimal(38, 6)` is `Decimal`.
 */
export function columnTypeOf(described: string): string {
  return described
    .replace(/LowCardinality\(([^()]*)\)/g, '$1')
    .replace(/\b(DateTime64|Decimal)\([^()]*\)/g, '$1');
}
