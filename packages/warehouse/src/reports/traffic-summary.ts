// The dashboard's top figures over a range (dashboard.md): pageviews and custom events by their own time,
// unique visitors with a record in the range, and the visits that start in the range with their bounce
// rate and duration; current visitors (a record in the last 5 minutes). Read from the visits table.
import type { Warehouse } from '../warehouse.ts';
import { ratio, type TrafficQuery, trafficScope } from './traffic-scope.ts';

export interface TrafficFigures {
  from: string;
  to: string;
  pageviews: number;
  visitors: number;
  visits: number;
  views_per_visit: number | null;
  bounce_rate: number | null;
  visit_duration_s: number | null;
  visit_duration_median_s: number | null;
  events: number;
}

const IN_RANGE = (times: string) => `arrayCount(t -> t >= range_start AND t < range_end, ${times})`;

export async function trafficFigures(warehouse: Warehouse, query: TrafficQuery): Promise<TrafficFigures> {
  const scope = trafficScope(query);
  const [row] = await warehouse.query<{
    pageviews: number;
    events: number;
    visitors: number;
    visits: number;
    bounces: number;
    total_ms: number;
    median_ms: number;
  }>(
    `${scope.with}
     SELECT sum(pv) AS pageviews, sum(ev) AS events, uniqExactIf(visitor_hash, pv + ev > 0) AS visitors,
            countIf(starts) AS visits, countIf(starts AND is_bounce) AS bounces,
            sumIf(duration_ms, starts) AS total_ms,
            quantileExactInclusiveIf(0.5)(duration_ms, starts) AS median_ms
     FROM (
       SELECT visitor_hash, is_bounce, duration_ms, start >= range_start AS starts,
              ${IN_RANGE('pageview_times')} AS pv, ${IN_RANGE('event_times')} AS ev
       FROM visits FINAL WHERE ${scope.where}
     )`,
    scope.params,
  );
  const visits = row?.visits ?? 0;
  return {
    from: query.from,
    to: query.to,
    pageviews: row?.pageviews ?? 0,
    visitors: row?.visitors ?? 0,
    visits,
    views_per_visit: ratio(row?.pageviews ?? 0, visits),
    bounce_rate: ratio(row?.bounces ?? 0, visits),
    visit_duration_s: visits ? (row?.total_ms ?? 0) / visits / 1000 : null,
    visit_duration_median_s: visits ? (row?.median_ms ?? 0) / 1000 : null,
    events: row?.events ?? 0,
  };
}

/** Visitors with a record in the last 5 minutes (to `now`), among the visits the filters keep. */
export async function currentVisitors(
  warehouse: Warehouse,
  query: Pick<TrafficQuery, 'project' | 'filters'>,
  now = Date.now(),
): Promise<number> {
  const scope = trafficScope({
    ...query,
    from: '2000-01-01',
    to: '2000-01-01',
    timeZone: 'UTC',
  });
  // The scope's range is replaced by the last five minutes.
  const [row] = await warehouse.query<{ n: number }>(
    `WITH fromUnixTimestamp64Milli({now:Int64}, 'UTC') - toIntervalMinute(5) AS range_start,
          fromUnixTimestamp64Milli({now:Int64}, 'UTC') + toIntervalMillisecond(1) AS range_end
     SELECT uniqExact(visitor_hash) AS n FROM visits FINAL
     WHERE ${scope.where}
       AND (arrayExists(t -> t >= range_start AND t < range_end, pageview_times)
         OR arrayExists(t -> t >= range_start AND t < range_end, event_times))`,
    { ...scope.params, now },
  );
  return row?.n ?? 0;
}
