// What every traffic query of the dashboard shares: a range of days in the project's time zone, the
// comparison period, the filters, and the SQL that selects the visits in scope from the visits table (with
// FINAL: each visit once, in its latest version; deleted ones gone).
import type { QueryParams } from '@tally/warehouse';
import { dayNumber as calendarDayNumber, dayOf, yearBefore } from '../calendar.ts';
import { filterCondition, type TrafficFilter } from './filters.ts';

export interface TrafficQuery {
  project: string;
  /** First and last day (YYYY-MM-DD, both included) in `timeZone`. */
  from: string;
  to: string;
  /** IANA time zone of the project (default UTC). */
  timeZone: string;
  filters: readonly TrafficFilter[];
}

/** The longest range a query may cover (two years and a day). */
export const MAX_RANGE_DAYS = 731;

/**
 * Days since the epoch of a YYYY-MM-DD date (a calendar date, no time zone): the calendar's, with a day
 * that is not real answered as a TrafficRangeError.
 */
export function dayNumber(day: string): number {
  const n = calendarDayNumber(day);
  if (Number.isNaN(n)) throw new TrafficRangeError('dates must be real days, YYYY-MM-DD');
  return n;
}
/** The day `days` after `day`, a TrafficRangeError when `day` is not real. */
export const addDays = (day: string, days: number): string => dayOf(dayNumber(day) + days);

export class TrafficRangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrafficRangeError';
  }
}

/** Checks a range: real days, `from` not after `to`, at most MAX_RANGE_DAYS. */
export function checkRange(from: string, to: string): void {
  const days = dayNumber(to) - dayNumber(from) + 1;
  if (days < 1) throw new TrafficRangeError('from must not be after to');
  if (days > MAX_RANGE_DAYS) throw new TrafficRangeError(`a range covers at most ${MAX_RANGE_DAYS} days`);
}

/** The comparison period: as many days just before (`previous`), or the same days a year earlier (`year`). */
export function comparisonRange(
  from: string,
  to: string,
  compare: 'previous' | 'year',
): { from: string; to: string } {
  // 29 February of a leap year is 28 February a year earlier.
  if (compare === 'year') return { from: yearBefore(from), to: yearBefore(to) };
  const days = dayNumber(to) - dayNumber(from) + 1;
  return { from: addDays(from, -days), to: addDays(from, -1) };
}

/**
 * The parameters and SQL of a query's scope. `range_start` and `range_end` are the instants the range's
 * first day starts and the day after its last starts, in the project's time zone. The visits in scope are
 * those of the project that overlap the range and pass the filters: a visit that starts before the range
 * reaches back at most the project's longest visit, which bounds the read to the range's days by the
 * table's key (the max over every stored version is at least the true one, so no visit is missed).
 */
export function trafficScope(
  query: TrafficQuery,
  prefix = '',
): {
  params: QueryParams;
  /** `WITH … ` clause defining range_start and range_end. */
  with: string;
  /** The WHERE condition on visits (FINAL) for the visits overlapping the range. */
  where: string;
} {
  checkRange(query.from, query.to);
  const filters = filterCondition(query.filters, `${prefix}f`);
  const p = (name: string) => `${prefix}${name}`;
  return {
    params: {
      [p('project')]: query.project,
      [p('start')]: `${query.from} 00:00:00`,
      [p('end')]: `${addDays(query.to, 1)} 00:00:00`,
      [p('tz')]: query.timeZone,
      ...filters.params,
    },
    with: `WITH toDateTime64({${p('start')}:String}, 3, {${p('tz')}:String}) AS range_start,
                toDateTime64({${p('end')}:String}, 3, {${p('tz')}:String}) AS range_end`,
    // The same bounds on toDate(start), the table's key: ClickHouse prunes granules by a key expression
    // only when the condition names it (a bound on the DateTime64 alone reads whole months). The reach is
    // named once so that its subquery (a scan of the project's durations) runs once.
    where: `project_id = {${p('project')}:String}
        AND start < range_end
        AND start >= ((range_start - toIntervalMillisecond(
              (SELECT max(duration_ms) FROM visits WHERE project_id = {${p('project')}:String}))) AS ${p('range_reach')})
        AND toDate(start) <= toDate(range_end, 'UTC')
        AND toDate(start) >= toDate(${p('range_reach')}, 'UTC')
        AND end >= range_start
        AND ${filters.sql}`,
  };
}

/** A ratio, or null when the denominator is 0. */
export const ratio = (numerator: number, denominator: number): number | null =>
  denominator === 0 ? null : numerator / denominator;
