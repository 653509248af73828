// The warehouse: where consumers land records and where reports and analysts read them. One small
// interface with one folder per backend, both running the same SQL (schemas/clickhouse):
//   clickhouse/  a ClickHouse server through @clickhouse/client (CLICKHOUSE_URL)
//   chdb/        the embedded engine chDB, in-process, data under TALLY_DATA_DIR/warehouse (the default)
// Cross-cutting behaviour (retries) wraps a backend: see withRetry. The interface is warehouse.ts; this
// file only re-exports. A backend's module (chDB's native library, @clickhouse/client) is loaded only when
// it is opened (open.ts): of the backends, only their types are re-exported here. The reports and the
// tables the consumers keep are @tally/reports; ClickHouse's HTTP interface over chDB is
// @tally/warehouse-http.
export { type AstNode, parseAstDump } from './ast-dump.ts';
export type { ChdbWarehouseOptions } from './chdb/chdb-warehouse.ts';
export type { ClickHouseWarehouseOptions } from './clickhouse/clickhouse-warehouse.ts';
export {
  type Columns,
  type ColumnType,
  type ColumnValues,
  columnTypeOf,
  type RowOf,
} from './columns.ts';
export { concurrently } from './concurrently.ts';
export {
  type DamagedPart,
  damagedParts,
  prepareReland,
  RELAND_COMMAND,
  type RelandPreparation,
  type WarehouseDamage,
  warehouseDamage,
} from './damaged-parts.ts';
export {
  clickhouseCodeOf,
  engineError,
  httpAnswerError,
  WarehouseError,
  WarehouseLockedError,
  WarehouseUnavailableError,
} from './errors.ts';
export { insertBlocks, PARTITION_KEYS, PARTITIONS_PER_INSERT } from './insert-blocks.ts';
export {
  type MigrateOptions,
  type Migration,
  MigrationChangedError,
  type MigrationResult,
  migrate,
} from './migrations.ts';
export {
  embeddedWarehouseDir,
  openChdbWarehouse,
  openClickHouseWarehouse,
  openWarehouse,
  type WarehouseConfig,
} from './open.ts';
export {
  type CrossProjectLookup,
  crossProjectLookups,
  PARAMETER_BYTES,
  parameterLists,
} from './parameter-lists.ts';
export {
  RECORD_ID_COLUMNS,
  RECORD_IDS_KEPT_DAYS,
  type RecordIdRow,
  recordIdRow,
  recordKey,
  storedArrivals,
  storedRecordIds,
} from './record-ids.ts';
export { type RetryOptions, withRetry } from './retry.ts';
export type { QueryOptions, QueryParam, QueryParams, Row, Warehouse } from './warehouse.ts';
