// Where each bucket of a time series stands against the clock, in the project's time zone: over (complete),
// the one now running (current: its figure is a part of the bucket's, so the chart draws it dashed and says
// so), or still to come (future: not drawn at all, rather than drawn as a fall to zero). Bucket starts are
// the API's (`YYYY-MM-DD HH:00` for hours, `YYYY-MM-DD` for days, weeks from Monday and months), compared as
// local wall-clock text, so the browser's own zone never enters.
import type { Interval } from '../api/types.ts';

export type BucketState = 'complete' | 'current' | 'future';

/** Now, as the wall clock of `timeZone` reads it: `YYYY-MM-DD HH:MM` (UTC if the zone is unknown). */
export function zonedNow(timeZone: string, now: Date = new Date()): string {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
  } catch {
    return now.toISOString().slice(0, 16).replace('T', ' ');
  }
  const part = Object.fromEntries(format.formatToParts(now).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}`;
}

const startOf = (date: string) => (date.length <= 10 ? `${date} 00:00` : date.slice(0, 16).replace('T', ' '));

/** The end of the bucket starting at `date` (exclusive), as `YYYY-MM-DD HH:MM`. */
export function bucketEnd(date: string, interval: Interval): string {
  const start = startOf(date);
  const ms = Date.parse(`${start.replace(' ', 'T')}:00Z`); // wall-clock text as if UTC: calendar arithmetic
  const day = new Date(ms);
  let end: number;
  if (interval === 'hour') end = ms + 3_600_000;
  else if (interval === 'day') end = ms + 86_400_000;
  else if (interval === 'week') {
    // The next Monday (a first week cut by the range's start ends there too).
    const toMonday = (8 - day.getUTCDay()) % 7 || 7;
    end = ms + toMonday * 86_400_000;
  } else end = Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1);
  return new Date(end).toISOString().slice(0, 16).replace('T', ' ');
}

export function bucketState(date: string, interval: Interval, now: string): BucketState {
  if (startOf(date) > now) return 'future';
  return bucketEnd(date, interval) > now ? 'current' : 'complete';
}

export interface SplitSeries {
  /** The figures to draw solid: complete buckets only. */
  complete: (number | null)[];
  /** The dashed part: from the last complete bucket to the current one; null elsewhere. */
  partial: (number | null)[];
  /** Every figure that exists (future buckets null): what the legend and the table read. */
  values: (number | null)[];
  states: BucketState[];
  /** The bucket now running, if the series reaches now. */
  current: number | null;
  /** The last bucket that is over. */
  lastComplete: number | null;
  /** How many buckets are still to come. */
  future: number;
}

/** Splits a series' figures by where their buckets stand against `now` (zonedNow's text). */
export function splitSeries(
  dates: string[],
  figures: (number | null)[],
  interval: Interval,
  now: string,
): SplitSeries {
  const states = dates.map((d) => bucketState(d, interval, now));
  const values = figures.map((v, i) => (states[i] === 'future' ? null : v));
  const current = states.indexOf('current');
  const lastComplete = states.lastIndexOf('complete');
  const complete = values.map((v, i) => (states[i] === 'complete' ? v : null));
  const partial = values.map((v, i) =>
    states[i] === 'current' || (current >= 0 && i === lastComplete && lastComplete === current - 1)
      ? v
      : null,
  );
  return {
    complete,
    partial,
    values,
    states,
    current: current >= 0 ? current : null,
    lastComplete: lastComplete >= 0 ? lastComplete : null,
    future: states.filter((s) => s === 'future').length,
  };
}
