// The traffic reports as the read API answers them, one function per report: the summary, the time series
// and a breakdown, each taking one query value (parsed and checked by its caller: the dashboard's route from
// the request, `tally report` from its flags) and the warehouse, and returning the JSON body of
// GET …/traffic/summary, …/traffic/timeseries and …/traffic/breakdown/{dimension}. Both front ends call these,
// so the CLI and the API cannot drift apart (the days are the project's, its time zone in the query).
import type { Warehouse } from '@tally/warehouse';
import { type BreakdownOptions, type BreakdownRow, trafficBreakdown } from './breakdown.ts';
import type { BreakdownDimension } from './dimensions.ts';
import { comparisonRange, type TrafficQuery } from './scope.ts';
import { currentVisitors, type TrafficFigures, trafficFiguresOfPeriods } from './summary.ts';
import { type TrafficInterval, type TrafficPoint, trafficTimeseries } from './timeseries.ts';

/** The comparison period of a summary or a time series (default `previous`). */
export type TrafficCompare = 'previous' | 'year' | 'none';

export interface TrafficSummaryQuery extends TrafficQuery {
  compare?: TrafficCompare | undefined;
}
export interface TrafficSummary extends TrafficFigures {
  time_zone: string;
  current_visitors: number;
  previous: TrafficFigures | null;
}

export interface TrafficTimeseriesQuery extends TrafficSummaryQuery {
  interval?: TrafficInterval | undefined;
}
export interface TrafficTimeseriesReport {
  interval: TrafficInterval;
  from: string;
  to: string;
  time_zone: string;
  points: TrafficPoint[];
  previous: { from: string; to: string; points: TrafficPoint[] } | null;
}

export interface TrafficBreakdownQuery extends TrafficQuery {
  dimension: BreakdownDimension;
  /** For event_property: the property's key. */
  property?: string | undefined;
  /** Most rows (default 10). */
  limit?: number | undefined;
  sort?: BreakdownOptions['sort'];
  order?: BreakdownOptions['order'];
}
export interface TrafficBreakdownReport {
  dimension: BreakdownDimension;
  property?: string | undefined;
  from: string;
  to: string;
  rows: BreakdownRow[];
  total: number;
}

/** The query of the comparison period, null for `none`. */
function comparisonOf(query: TrafficQuery, compare: TrafficCompare | undefined): TrafficQuery | null {
  return compare === 'none'
    ? null
    : { ...query, ...comparisonRange(query.from, query.to, compare ?? 'previous') };
}

/** GET …/traffic/summary: the range's figures, the comparison period's and the current visitors. */
export async function trafficSummaryReport(
  warehouse: Warehouse,
  query: TrafficSummaryQuery,
  now = Date.now(),
): Promise<TrafficSummary> {
  const previousQuery = comparisonOf(query, query.compare);
  // The range and its comparison period in one pass when they touch (the previous period does).
  const periods = [
    { from: query.from, to: query.to },
    ...(previousQuery ? [{ from: previousQuery.from, to: previousQuery.to }] : []),
  ];
  const [[figures, previous = null], current] = await Promise.all([
    trafficFiguresOfPeriods(warehouse, query, periods),
    currentVisitors(warehouse, query, now),
  ]);
  return { ...(figures as TrafficFigures), time_zone: query.timeZone, current_visitors: current, previous };
}

/** GET …/traffic/timeseries: the figures per bucket, beside those of the comparison period. */
export async function trafficTimeseriesReport(
  warehouse: Warehouse,
  query: TrafficTimeseriesQuery,
): Promise<TrafficTimeseriesReport> {
  const interval = query.interval ?? 'day';
  const previousQuery = comparisonOf(query, query.compare);
  const [points, previousPoints] = await Promise.all([
    trafficTimeseries(warehouse, query, interval),
    previousQuery ? trafficTimeseries(warehouse, previousQuery, interval) : null,
  ]);
  const previous =
    previousQuery && previousPoints
      ? { from: previousQuery.from, to: previousQuery.to, points: previousPoints.slice(0, points.length) }
      : null;
  return { interval, from: query.from, to: query.to, time_zone: query.timeZone, points, previous };
}

/** GET …/traffic/breakdown/{dimension}: the figures per value of a dimension, largest first. */
export async function trafficBreakdownReport(
  warehouse: Warehouse,
  query: TrafficBreakdownQuery,
): Promise<TrafficBreakdownReport> {
  const { dimension } = query;
  const result = await trafficBreakdown(warehouse, query, {
    dimension,
    property: query.property,
    limit: query.limit ?? 10,
    sort: query.sort,
    order: query.order,
  });
  return {
    dimension,
    ...(dimension === 'event_property' ? { property: query.property } : {}),
    from: query.from,
    to: query.to,
    rows: result.rows,
    total: result.total,
  };
}
