// The dashboard's figures per hour, day, week (from Monday) or month of the project's time zone:
// pageviews, custom events and unique visitors by their records' own time, visits (with bounce rate and
// mean duration) in the bucket where they start. Every bucket of the range is present, zeros included.
import type { Warehouse } from '../warehouse.ts';
import {
  addDays,
  dayNumber,
  ratio,
  type TrafficQuery,
  TrafficRangeError,
  trafficScope,
} from './traffic-scope.ts';

export type TrafficInterval = 'hour' | 'day' | 'week' | 'month';

export interface TrafficPoint {
  date: string;
  pageviews: number;
  visitors: number;
  visits: number;
  bounce_rate: number | null;
  visit_duration_s: number | null;
  events: number;
}

/** Hours are only for ranges of at most this many days (744 points). */
export const MAX_HOURLY_DAYS = 31;

const BUCKET: Record<TrafficInterval, (t: string) => string> = {
  hour: (t) => `formatDateTime(toStartOfHour(${t}, {tz:String}), '%Y-%m-%d %H:00', {tz:String})`,
  day: (t) => `toString(toDate(${t}, {tz:String}))`,
  week: (t) => `toString(toMonday(${t}, {tz:String}))`,
  month: (t) => `toString(toStartOfMonth(${t}, {tz:String}))`,
};

/** The labels of every bucket of the range, in order. */
export function bucketsOf(from: string, to: string, interval: TrafficInterval, timeZone: string): string[] {
  const labels: string[] = [];
  if (interval === 'hour') {
    if (dayNumber(to) - dayNumber(from) + 1 > MAX_HOURLY_DAYS) {
      throw new TrafficRangeError(`hourly figures cover at most ${MAX_HOURLY_DAYS} days`);
    }
    // Every hour between the range's first and last instant, labelled in the time zone (a repeated label,
    // when clocks go back, is one bucket, as in the query).
    const format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
    });
    const label = (ms: number) => {
      const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]));
      return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:00`;
    };
    // The instants bounding the range: search around UTC midnight for the zone's midnight (offsets < 15 h).
    const first = Date.parse(`${from}T00:00:00Z`) - 15 * 3_600_000;
    const last = Date.parse(`${addDays(to, 1)}T00:00:00Z`) + 15 * 3_600_000;
    for (let ms = first; ms < last; ms += 1_800_000) {
      const l = label(ms);
      const day = l.slice(0, 10);
      if (day >= from && day <= to && labels.at(-1) !== l && !labels.includes(l)) labels.push(l);
    }
    return labels;
  }
  for (let n = dayNumber(from); n <= dayNumber(to); n++) {
    const day = addDays('1970-01-01', n);
    const weekday = (n + 3) % 7; // 1970-01-01 was a Thursday; 0 is Monday
    const start =
      interval === 'day' ? day : interval === 'week' ? addDays(day, -weekday) : `${day.slice(0, 7)}-01`;
    if (labels.at(-1) !== start) labels.push(start);
  }
  return labels;
}

export async function trafficTimeseries(
  warehouse: Warehouse,
  query: TrafficQuery,
  interval: TrafficInterval,
): Promise<TrafficPoint[]> {
  const labels = bucketsOf(query.from, query.to, interval, query.timeZone);
  const scope = trafficScope(query);
  const params = { ...scope.params };
  // Pageviews and events by their own time; visitors per bucket from each visit's distinct buckets (a
  // visit adds its visitor once to every bucket it has a record in). Arrays of times only: no tuples.
  const inRange = (times: string) => `arrayFilter(t -> t >= range_start AND t < range_end, ${times})`;
  const [pageviews, events, visitors] = await Promise.all(
    [
      `SELECT ${BUCKET[interval]('t')} AS date, count() AS n
       FROM (SELECT arrayJoin(${inRange('pageview_times')}) AS t FROM visits FINAL WHERE ${scope.where})
       GROUP BY date`,
      `SELECT ${BUCKET[interval]('t')} AS date, count() AS n
       FROM (SELECT arrayJoin(${inRange('event_times')}) AS t FROM visits FINAL WHERE ${scope.where})
       GROUP BY date`,
      `SELECT date, uniqExact(visitor_hash) AS n
       FROM (
         SELECT visitor_hash,
                arrayJoin(arrayDistinct(arrayMap(t -> ${BUCKET[interval]('t')}, ${inRange('arrayConcat(pageview_times, event_times)')}))) AS date
         FROM visits FINAL WHERE ${scope.where}
       )
       GROUP BY date`,
    ].map((sql) => warehouse.query<{ date: string; n: number }>(`${scope.with} ${sql}`, params)),
  );
  const count = (rows: { date: string; n: number }[] | undefined) =>
    new Map((rows ?? []).map((r) => [r.date, r.n]));
  const byPageviews = count(pageviews);
  const byEvents = count(events);
  const byVisitors = count(visitors);
  const visits = await warehouse.query<{
    date: string;
    visits: number;
    bounces: number;
    total_ms: number;
  }>(
    `${scope.with}
     SELECT ${BUCKET[interval]('start')} AS date, count() AS visits, countIf(is_bounce) AS bounces,
            sum(duration_ms) AS total_ms
     FROM visits FINAL WHERE ${scope.where} AND start >= range_start
     GROUP BY date`,
    params,
  );
  const byVisits = new Map(visits.map((v) => [v.date, v]));
  return labels.map((date) => {
    const v = byVisits.get(date);
    const n = v?.visits ?? 0;
    return {
      date,
      pageviews: byPageviews.get(date) ?? 0,
      visitors: byVisitors.get(date) ?? 0,
      visits: n,
      bounce_rate: ratio(v?.bounces ?? 0, n),
      visit_duration_s: n ? (v?.total_ms ?? 0) / n / 1000 : null,
      events: byEvents.get(date) ?? 0,
    };
  });
}
