// The warehouse: where consumers land records and where reports and analysts read them. One small
// interface with one folder per backend, both running the same SQL (schemas/clickhouse):
//   clickhouse/  a ClickHouse server through @clickhouse/client (CLICKHOUSE_URL)
//   chdb/        the embedded engine chDB, in-process, data under TALLY_DATA_DIR/warehouse (the default)
// Cross-cutting behaviour (retries) wraps a backend: see withRetry. The interface is warehouse.ts; this
// file only re-exports. A backend's module (chDB's native library, @clickhouse/client) is loaded only when
// it is opened (open.ts): of the backends, only their types are re-exported here.

export { type AstNode, parseAstDump } from './ast-dump.ts';
export type { ChdbWarehouseOptions } from './chdb/chdb-warehouse.ts';
export type { ClickHouseWarehouseOptions } from './clickhouse/clickhouse-warehouse.ts';
export * from './damaged-parts.ts';
export * from './errors.ts';
export * from './insert-blocks.ts';
export * from './migrations.ts';
export * from './open.ts';
export * from './parameter-lists.ts';
export * from './record-ids.ts';
export * from './reports/channels.ts';
export * from './reports/daily-revenue.ts';
export * from './reports/exchange-rates.ts';
export * from './reports/ingestion-health.ts';
export * from './reports/monthly-revenue.ts';
export * from './reports/mrr-movements.ts';
export * from './reports/mrr-table.ts';
export * from './reports/revenue-attribution.ts';
export * from './reports/revenue-breakdown.ts';
export * from './reports/revenue-cache.ts';
export * from './reports/revenue-customers.ts';
export * from './reports/revenue-drilldown.ts';
export * from './reports/revenue-filters.ts';
export * from './reports/revenue-funnel.ts';
export * from './reports/revenue-period.ts';
export * from './reports/revenue-probe.ts';
export * from './reports/revenue-reconciliation.ts';
export * from './reports/revenue-scope.ts';
export * from './reports/revenue-search.ts';
export * from './reports/revenue-warm.ts';
export * from './reports/touches-cache.ts';
export * from './reports/traffic.ts';
export * from './reports/traffic-breakdown.ts';
export * from './reports/traffic-dimensions.ts';
export * from './reports/traffic-filters.ts';
export * from './reports/traffic-goals.ts';
export * from './reports/traffic-scope.ts';
export * from './reports/traffic-summary.ts';
export * from './reports/traffic-timeseries.ts';
export * from './reports/visits.ts';
export * from './reports/visits-table.ts';
export * from './retry.ts';
export * from './warehouse.ts';
