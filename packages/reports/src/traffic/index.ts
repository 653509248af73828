// The traffic figures (`@tally/reports/traffic`), read from the visits table the analytics consumer keeps
// and from the events views: visits.ts the visit fold (and channels.ts, a visit's source and channel),
// dimensions.ts what a breakdown lists and a filter matches, filters.ts the filter syntax, scope.ts what
// every query shares (a range of days in the project's time zone, the comparison period, the visits in
// scope), summary.ts the top figures, timeseries.ts the figures per bucket, breakdown.ts per value,
// goals.ts goals and funnels, report.ts `tally report traffic` (queries.ts, the API's answers, is exported by
// `@tally/reports/queries`). This file only re-exports.
export {
  BreakdownError,
  type BreakdownOptions,
  type BreakdownRow,
  type TrafficBreakdown,
  trafficBreakdown,
} from './breakdown.ts';
export { channelOf, sourceOf, type VisitOrigin } from './channels.ts';
export {
  BREAKDOWN_DIMENSIONS,
  type BreakdownDimension,
  CHANNELS,
  type Channel,
  DIRECT_SOURCE,
  FILTER_DIMENSIONS,
  type FilterDimension,
  NOT_FOUND_EVENT,
  VISIT_DIMENSIONS,
  type VisitDimension,
} from './dimensions.ts';
export { type FilterOperator, FilterSyntaxError, parseFilters, type TrafficFilter } from './filters.ts';
export { funnelSteps, type GoalFigures, type GoalTarget, goalConversions } from './goals.ts';
export { type TrafficReport, trafficReport } from './report.ts';
export {
  checkRange,
  comparisonRange,
  MAX_RANGE_DAYS,
  type TrafficQuery,
  TrafficRangeError,
} from './scope.ts';
export { currentVisitors, type TrafficFigures, trafficFigures, trafficFiguresOfPeriods } from './summary.ts';
export { MAX_HOURLY_DAYS, type TrafficInterval, type TrafficPoint, trafficTimeseries } from './timeseries.ts';
export { type EntryAttributes, VISIT_GAP_MS, type Visit, type VisitRecord, visitsOf } from './visits.ts';
