// The revenue reports (`@tally/reports/revenue`), all folds of one MRR ledger (ledger.ts) over the stored
// revenue history, so that every figure adds up to every other exactly: period.ts a period's fold per
// customer, which monthly.ts, daily.ts, attribution.ts, breakdown.ts, drilldown.ts, reconciliation.ts,
// customers.ts and funnel.ts read; history-cache.ts and touches-cache.ts keep what they read per project,
// refreshed by what changed (probe.ts). scope.ts and filters.ts check what a view is asked for;
// exchange-rates.ts converts; search.ts finds records by metadata; warm.ts fills the caches. This file
// only re-exports.
export {
  type Attribution,
  type AttributionRow,
  type CustomerTouches,
  readCustomerTouches,
  revenueAttribution,
  type Touchpoint,
  UNATTRIBUTED,
} from './attribution.ts';
export { type RevenueBreakdown, revenueBreakdown } from './breakdown.ts';
export {
  type CustomerState,
  type CustomerStatus,
  type CustomerSummary,
  customerList,
  customerListPage,
  type MrrHistoryPoint,
  mrrHistory,
  readCustomerRecords,
  readVisitTimeline,
  TIMELINE_VISITS,
  type TimelineVisit,
} from './customers.ts';
export { checkDayRange, type DailyRevenue, dailyRevenue, dayEnd, MAX_REVENUE_DAYS } from './daily.ts';
export {
  DRILLDOWN_FIGURES,
  type Drilldown,
  type DrilldownFigure,
  type DrilldownItem,
  revenueDrilldown,
} from './drilldown.ts';
export {
  type Converted,
  type ConvertedDay,
  type ConvertedMonth,
  convertDaily,
  convertMonthly,
  type ExchangeRate,
  ExchangeRateFileError,
  loadExchangeRates,
  parseExchangeRatesCsv,
  RateTable,
  type RateUsed,
  rateTableFor,
  readExchangeRates,
} from './exchange-rates.ts';
export {
  checkRevenueDimension,
  filterRevenueRecords,
  METADATA_PREFIX,
  NO_ATTRIBUTE,
  parseRevenueFilters,
  REVENUE_DIMENSIONS,
  type RevenueFilter,
  readCustomerAttributes,
  readRevenueMetadataKeys,
} from './filters.ts';
export { type AcquisitionFunnel, acquisitionFunnel, type FunnelRow } from './funnel.ts';
export { forgetRevenueHistory, REVENUE_CACHE_ENTRIES, readMrrInputsCached } from './history-cache.ts';
export {
  type DataWarning,
  type MovementKind,
  type MrrInput,
  type MrrMovement,
  mrrMovements,
} from './ledger.ts';
export {
  type Money,
  type MonthlyRevenue,
  monthlyRevenue,
  monthStart,
  mrrReport,
  readMrrInputs,
} from './monthly.ts';
export {
  CASH_KINDS,
  type CashKind,
  type Reconciliation,
  type ReconciliationWarning,
  readStoredMovements,
  reconcile,
} from './reconciliation.ts';
export {
  ATTRIBUTION_DIMENSIONS,
  type AttributionDimension,
  checkMonth,
  checkMonthRange,
  currencyOf,
  MAX_REVENUE_MONTHS,
  RevenueQueryError,
  TOUCHES,
  type Touch,
} from './scope.ts';
export { type StoredRevenueRecord, searchRevenue } from './search.ts';
export { forgetCustomerTouches, readCustomerTouchesCached, TOUCHES_CACHE_ENTRIES } from './touches-cache.ts';
export { revenueCurrencies, warmRevenue } from './warm.ts';
