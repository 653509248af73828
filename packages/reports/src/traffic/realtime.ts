// The realtime view (docs/traffic.md, "Realtime"): the visitors now (the current visitors' definition,
// summary.ts), the pageviews of each of the last 30 minutes, and the top pages, sources and countries of
// those minutes. Read from the visits table, as every traffic figure is: its rows hold each pageview's time
// and path and the visit's source and country (those of its entry pageview), and the filters keep visits,
// so the realtime lists follow the same definitions and filters as the rest of the dashboard.
import type { Warehouse } from '@tally/warehouse';
import type { TrafficQuery } from './scope.ts';
import { trafficScope } from './scope.ts';
import { currentVisitors } from './summary.ts';

/** Minutes the view covers: the current one and the 29 before it. */
export const REALTIME_MINUTES = 30;
/** Rows of each list. */
export const REALTIME_TOP = 10;

export interface RealtimeQuery extends Pick<TrafficQuery, 'project' | 'filters'> {
  /** The instant the view is of, in ms since the epoch (default: now). */
  now?: number | undefined;
}

export interface RealtimeRow {
  value: string;
  visitors: number;
}

/** GET …/traffic/realtime. */
export interface RealtimeReport {
  visitors: number;
  pageviews_per_minute: { minute: string; pageviews: number }[];
  pages: RealtimeRow[];
  sources: RealtimeRow[];
  countries: RealtimeRow[];
}

const MINUTE_MS = 60_000;

/**
 * GET …/traffic/realtime: the visitors now (a record in the last 5 minutes), and over the window from the
 * start of the minute 29 minutes before `now`'s to `now` (both included): pageviews per minute (30 points,
 * oldest first, zeros included), the pages viewed with the visitors who viewed each, and the visitors with
 * a record in the window by their visit's source and country, top 10 of each by visitors (then by value).
 * Bots are not in the visits table; each record counts once (FINAL).
 */
export async function trafficRealtimeReport(
  warehouse: Warehouse,
  query: RealtimeQuery,
): Promise<RealtimeReport> {
  const now = query.now ?? Date.now();
  const firstMinute = Math.floor(now / MINUTE_MS) - (REALTIME_MINUTES - 1);
  // The scope's range of days is replaced by the window (its WHERE names range_start and range_end only).
  const scope = trafficScope({
    project: query.project,
    filters: query.filters,
    from: '2000-01-01',
    to: '2000-01-01',
    timeZone: 'UTC',
  });
  const params = {
    ...scope.params,
    window_start: firstMinute * MINUTE_MS,
    window_end: now + 1,
    top: REALTIME_TOP,
  };
  const window = `WITH fromUnixTimestamp64Milli({window_start:Int64}, 'UTC') AS range_start,
                       fromUnixTimestamp64Milli({window_end:Int64}, 'UTC') AS range_end`;
  const inWindow = 't >= range_start AND t < range_end';
  const pageviews = `SELECT visitor_hash, pageview_times, pageview_paths FROM visits FINAL WHERE ${scope.where}`;
  const top = (column: string) =>
    warehouse.query<RealtimeRow>(
      `${window}
       SELECT ${column} AS value, uniqExact(visitor_hash) AS visitors
       FROM visits FINAL
       WHERE ${scope.where}
         AND (arrayExists(t -> ${inWindow}, pageview_times) OR arrayExists(t -> ${inWindow}, event_times))
       GROUP BY value ORDER BY visitors DESC, value ASC LIMIT {top:UInt32}`,
      params,
    );
  const [visitors, minutes, pages, sources, countries] = await Promise.all([
    currentVisitors(warehouse, query, now),
    warehouse.query<{ minute: number; pageviews: number }>(
      `${window}
       SELECT intDiv(toUnixTimestamp64Milli(t), ${MINUTE_MS}) AS minute, count() AS pageviews
       FROM (${pageviews}) ARRAY JOIN pageview_times AS t
       WHERE ${inWindow} GROUP BY minute`,
      params,
    ),
    warehouse.query<RealtimeRow>(
      `${window}
       SELECT path AS value, uniqExact(visitor_hash) AS visitors
       FROM (${pageviews}) ARRAY JOIN pageview_times AS t, pageview_paths AS path
       WHERE ${inWindow}
       GROUP BY value ORDER BY visitors DESC, value ASC LIMIT {top:UInt32}`,
      params,
    ),
    top('source'),
    top('country'),
  ]);
  const byMinute = new Map(minutes.map((m) => [Number(m.minute), Number(m.pageviews)]));
  return {
    visitors,
    pageviews_per_minute: Array.from({ length: REALTIME_MINUTES }, (_, i) => ({
      minute: new Date((firstMinute + i) * MINUTE_MS).toISOString(),
      pageviews: byMinute.get(firstMinute + i) ?? 0,
    })),
    pages: pages.map(rowOf),
    sources: sources.map(rowOf),
    countries: countries.map(rowOf),
  };
}

const rowOf = (row: RealtimeRow): RealtimeRow => ({ value: row.value, visitors: Number(row.visitors) });
