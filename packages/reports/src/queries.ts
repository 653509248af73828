// `@tally/reports/queries`: every report as the read API answers it, one function per report, each taking
// one query value and the warehouse and returning the JSON body of its GET …/api/v1/projects/{project}/…
// operation. The dashboard's routes and `tally report` both call these (and nothing else to assemble a
// report), so the two front ends give the same figures for the same query. This file only re-exports.
export {
  type Cohort,
  type CohortMonth,
  type RevenueCohorts,
  type RevenueCohortsQuery,
  revenueCohortsReport,
} from './revenue/cohorts.ts';
export {
  type RevenueCurrencies,
  type RevenueCurrenciesQuery,
  type RevenueCurrency,
  revenueCurrenciesReport,
} from './revenue/currencies.ts';
export {
  type RevenueCustomer,
  type RevenueCustomerQuery,
  type RevenueCustomers,
  type RevenueCustomersQuery,
  type RevenueFunnelQuery,
  revenueCustomerReport,
  revenueCustomersReport,
  revenueFunnelReport,
} from './revenue/customer-queries.ts';
export {
  type RevenueAttributionQuery,
  type RevenueBreakdownQuery,
  type RevenueMonthsQuery,
  type RevenueMrrDailyQuery,
  type RevenueMrrQuery,
  type RevenueReconciliationQuery,
  type RevenueRecordsQuery,
  revenueAttributionReport,
  revenueBreakdownReport,
  revenueMrrDailyReport,
  revenueMrrReport,
  revenueReconciliationReport,
  revenueRecordsReport,
} from './revenue/queries.ts';
export {
  type TrafficBreakdownQuery,
  type TrafficBreakdownReport,
  type TrafficCompare,
  type TrafficSummary,
  type TrafficSummaryQuery,
  type TrafficTimeseriesQuery,
  type TrafficTimeseriesReport,
  trafficBreakdownReport,
  trafficSummaryReport,
  trafficTimeseriesReport,
} from './traffic/queries.ts';
export {
  REALTIME_MINUTES,
  REALTIME_TOP,
  type RealtimeQuery,
  type RealtimeReport,
  type RealtimeRow,
  trafficRealtimeReport,
} from './traffic/realtime.ts';
