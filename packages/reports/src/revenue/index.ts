// The revenue reports (`@tally/reports/revenue`), all folds of one MRR ledger over one stored history, so
// that every figure adds up to every other exactly. The bases, from the bottom: ledger.ts the MRR rules (a
// customer's movements, in the order of the records' own time), history.ts the stored history as the
// ledger reads it (history-cache.ts keeps it per project, refreshed by what changed: probe.ts), money.ts
// exact money and sums per group, touches.ts the customers' first and last touches (touches-cache.ts keeps
// them). cohorts.ts folds the ledger per customer and month. On them period.ts folds a period per customer, which monthly.ts, daily.ts, attribution.ts,
// breakdown.ts, drilldown.ts, reconciliation.ts, customers.ts and funnel.ts read. scope.ts and filters.ts
// check what a view is asked for; exchange-rates.ts converts; search.ts finds records by metadata; warm.ts
// fills the caches. This file only re-exports.
export { type Attribution, revenueAttribution } from './attribution.ts';
export { type RevenueBreakdown, revenueBreakdown } from './breakdown.ts';
export { type Cohort, type CohortMonth, type RevenueCohorts, revenueCohorts } from './cohorts.ts';
export {
  CUSTOMER_SORTS,
  type CustomerContact,
  type CustomerSort,
  type CustomerState,
  type CustomerStatus,
  type CustomerSummary,
  customerList,
  customerListPage,
  type MrrHistoryPoint,
  mrrHistory,
  readCustomerContacts,
  readCustomerRecords,
  readVisitTimeline,
  TIMELINE_VISITS,
  type TimelineVisit,
} from './customers.ts';
export { checkDayRange, type DailyRevenue, dailyRevenue, MAX_REVENUE_DAYS } from './daily.ts';
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
export { readMrrInputs } from './history.ts';
export { forgetRevenueHistory, REVENUE_CACHE_ENTRIES, readMrrInputsCached } from './history-cache.ts';
export {
  type DataWarning,
  type MovementKind,
  type MrrInput,
  type MrrMovement,
  mrrMovements,
} from './ledger.ts';
export type { AttributionRow, Money } from './money.ts';
export { type MonthlyRevenue, monthlyRevenue, mrrReport } from './monthly.ts';
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
export { type CustomerTouches, readCustomerTouches, type Touchpoint, UNATTRIBUTED } from './touches.ts';
export { forgetCustomerTouches, readCustomerTouchesCached, TOUCHES_CACHE_ENTRIES } from './touches-cache.ts';
export { revenueCurrencies, warmRevenue } from './warm.ts';
