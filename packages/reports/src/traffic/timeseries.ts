// The dashboard's figures per hour, day, week (from Monday) or month of the project's time zone:
// pageviews, custom events and unique visitors by their records' own time, visits (with bounce rate and
// mean duration) in the bucket where they start. Every bucket of the range is present, zeros included.

import type { Warehouse } from '@tally/warehouse';
import { dayOf, utcDayEnd, utcDayStart } from '../calendar.ts';
import { addDays, dayNumber, ratio, type TrafficQuery, TrafficRangeError, trafficScope } from './scope.ts';

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

/** A bucket's key (a Date or DateTime in the time zone: cheap to compare in arrays) and its label. */
const BUCKET: Record<TrafficInterval, { key: (t: string) => string; label: (k: string) => string }> = {
  hour: {
    key: (t) => `toStartOfHour(${t}, {tz:String})`,
    label: (k) => `formatDateTime(${k}, '%Y-%m-%d %H:00', {tz:String})`,
  },
  day: { key: (t) => `toDate(${t}, {tz:String})`, label: (k) => `toString(${k})` },
  week: { key: (t) => `toMonday(${t}, {tz:String})`, label: (k) => `toString(${k})` },
  month: { key: (t) => `toStartOfMonth(${t}, {tz:String})`, label: (k) => `toString(${k})` },
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
    const first = utcDayStart(from) - 15 * 3_600_000;
    const last = utcDayEnd(to) + 15 * 3_600_000;
    for (let ms = first; ms < last; ms += 1_800_000) {
      const l = label(ms);
      const day = l.slice(0, 10);
      if (day >= from && day <= to && labels.at(-1) !== l && !labels.includes(l)) labels.push(l);
    }
    return labels;
  }
  for (let n = dayNumber(from); n <= dayNumber(to); n++) {
    const day = dayOf(n);
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
  // One pass over the visits: each visit gives, for every bucket it has a record in, its pageviews and
  // events there (by their own time), its visitor once, and itself if it starts there.
  const bucket = BUCKET[interval];
  const inRange = (times: string) => `arrayFilter(t -> t >= range_start AND t < range_end, ${times})`;
  const rows = await warehouse.query<{
    date: string;
    pageviews: number;
    events: number;
    visitors: number;
    visits: number;
    bounces: number;
    total_ms: number;
  }>(
    `${scope.with}
     SELECT ${bucket.label('b.1')} AS date, sum(b.2) AS pageviews, sum(b.3) AS events,
            uniqExact(visitor_hash) AS visitors, countIf(b.4) AS visits, countIf(b.4 AND is_bounce) AS bounces,
            sumIf(duration_ms, b.4) AS total_ms
     FROM (
       SELECT visitor_hash, is_bounce, duration_ms,
              arrayMap(t -> ${bucket.key('t')}, ${inRange('pageview_times')}) AS pb,
              arrayMap(t -> ${bucket.key('t')}, ${inRange('event_times')}) AS eb,
              start >= range_start AS starts,
              ${bucket.key('start')} AS sb,
              arrayJoin(arrayMap(k -> (k, countEqual(pb, k), countEqual(eb, k), starts AND k = sb),
                                 arrayDistinct(arrayConcat(pb, eb)))) AS b
       FROM visits FINAL WHERE ${scope.where}
     )
     GROUP BY date`,
    params,
  );
  const byDate = new Map(rows.map((r) => [r.date, r]));
  return labels.map((date) => {
    const row = byDate.get(date);
    const n = row?.visits ?? 0;
    return {
      date,
      pageviews: row?.pageviews ?? 0,
      visitors: row?.visitors ?? 0,
      visits: n,
      bounce_rate: ratio(row?.bounces ?? 0, n),
      visit_duration_s: n ? (row?.total_ms ?? 0) / n / 1000 : null,
      events: row?.events ?? 0,
    };
  });
}
