// The dashboard's top figures over a range (docs/traffic.md): pageviews and custom events by their own time,
// unique visitors with a record in the range, and the visits that start in the range with their bounce
// rate and duration; current visitors (a record in the last 5 minutes). Read from the visits table.
import type { Warehouse } from '@tally/warehouse';
import { addDays, checkRange, ratio, type TrafficQuery, trafficScope } from './scope.ts';

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

/** The figures of one range. */
export async function trafficFigures(warehouse: Warehouse, query: TrafficQuery): Promise<TrafficFigures> {
  const [figures] = await trafficFiguresOfPeriods(warehouse, query, [{ from: query.from, to: query.to }]);
  return figures as TrafficFigures;
}

/**
 * The figures of several ranges of one project and filters (a range and its comparison period): in one
 * pass over the visits when the ranges touch (the previous period), else one pass each.
 */
export async function trafficFiguresOfPeriods(
  warehouse: Warehouse,
  query: TrafficQuery,
  periods: readonly { from: string; to: string }[],
): Promise<TrafficFigures[]> {
  const sorted = [...periods].sort((a, b) => a.from.localeCompare(b.from));
  const adjacent = sorted.every(
    (p, i) => i === 0 || addDays((sorted[i - 1] as { to: string }).to, 1) >= p.from,
  );
  if (!adjacent && periods.length > 1) {
    return Promise.all(
      periods.map((p) =>
        trafficFiguresOfPeriods(warehouse, { ...query, ...p }, [p]).then((f) => f[0] as TrafficFigures),
      ),
    );
  }
  const union = {
    from: (sorted[0] as { from: string }).from,
    to: sorted.reduce((to, p) => (p.to > to ? p.to : to), ''),
  };
  const scope = trafficScope({ ...query, ...union });
  const params = { ...scope.params };
  const bounds: string[] = [];
  const inner: string[] = [];
  const outer: string[] = [];
  periods.forEach((period, i) => {
    checkRange(period.from, period.to);
    params[`p${i}s`] = `${period.from} 00:00:00`;
    params[`p${i}e`] = `${addDays(period.to, 1)} 00:00:00`;
    bounds.push(
      `toDateTime64({p${i}s:String}, 3, {tz:String}) AS p${i}_start, toDateTime64({p${i}e:String}, 3, {tz:String}) AS p${i}_end`,
    );
    const inPeriod = `t >= p${i}_start AND t < p${i}_end`;
    inner.push(
      `arrayCount(t -> ${inPeriod}, pageview_times) AS pv${i}, arrayCount(t -> ${inPeriod}, event_times) AS ev${i}, ` +
        `start >= p${i}_start AND start < p${i}_end AS starts${i}`,
    );
    outer.push(
      `sum(pv${i}) AS pageviews${i}, sum(ev${i}) AS events${i}, uniqExactIf(visitor_hash, pv${i} + ev${i} > 0) AS visitors${i}, ` +
        `countIf(starts${i}) AS visits${i}, countIf(starts${i} AND is_bounce) AS bounces${i}, ` +
        `sumIf(duration_ms, starts${i}) AS total_ms${i}, quantileExactInclusiveIf(0.5)(duration_ms, starts${i}) AS median_ms${i}`,
    );
  });
  const [row = {}] = await warehouse.query<Record<string, number>>(
    `${scope.with}, ${bounds.join(', ')}
     SELECT ${outer.join(', ')}
     FROM (SELECT visitor_hash, is_bounce, duration_ms, ${inner.join(', ')} FROM visits FINAL WHERE ${scope.where})`,
    params,
  );
  return periods.map((period, i) => {
    const visits = row[`visits${i}`] ?? 0;
    const pageviews = row[`pageviews${i}`] ?? 0;
    return {
      from: period.from,
      to: period.to,
      pageviews,
      visitors: row[`visitors${i}`] ?? 0,
      visits,
      views_per_visit: ratio(pageviews, visits),
      bounce_rate: ratio(row[`bounces${i}`] ?? 0, visits),
      visit_duration_s: visits ? (row[`total_ms${i}`] ?? 0) / visits / 1000 : null,
      visit_duration_median_s: visits ? (row[`median_ms${i}`] ?? 0) / 1000 : null,
      events: row[`events${i}`] ?? 0,
    };
  });
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
