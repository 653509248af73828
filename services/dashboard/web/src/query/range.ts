// Date ranges of the dashboard, as days (YYYY-MM-DD) in the project's time zone. The server says what day
// it is there (`Project.today`), so the browser's own clock and zone never decide a range; everything here
// is calendar arithmetic on day strings.
import type { Interval } from '../api/types.ts';

export type Period = 'today' | '7d' | '30d' | '90d' | 'mtd' | 'lastmonth' | 'custom';

export const PERIODS: { id: Period; label: string }[] = [
  { id: 'today', label: 'Today' },
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
  { id: '90d', label: 'Last 90 days' },
  { id: 'mtd', label: 'Month to date' },
  { id: 'lastmonth', label: 'Last month' },
  { id: 'custom', label: 'Custom range' },
];
export const DEFAULT_PERIOD: Period = '30d';
/** The API answers ranges of at most this many days. */
export const MAX_RANGE_DAYS = 731;
const DAY_MS = 86_400_000;

export interface DayRange {
  from: string;
  to: string;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isDay(text: string | undefined | null): text is string {
  const match = text ? DAY.exec(text) : null;
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === text;
}

const toMs = (day: string) => Date.parse(`${day}T00:00:00Z`);
const toDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const addDays = (day: string, days: number) => toDay(toMs(day) + days * DAY_MS);
/** Days from `from` to `to`, both included. */
export const rangeDays = (range: DayRange) => Math.round((toMs(range.to) - toMs(range.from)) / DAY_MS) + 1;

export function resolveRange(
  period: Period,
  today: string,
  custom?: { from?: string | undefined; to?: string | undefined },
): DayRange {
  switch (period) {
    case 'today':
      return { from: today, to: today };
    case '7d':
      return { from: addDays(today, -6), to: today };
    case '30d':
      return { from: addDays(today, -29), to: today };
    case '90d':
      return { from: addDays(today, -89), to: today };
    case 'mtd':
      return { from: `${today.slice(0, 7)}-01`, to: today };
    case 'lastmonth': {
      const firstOfThisMonth = `${today.slice(0, 7)}-01`;
      const last = addDays(firstOfThisMonth, -1);
      return { from: `${last.slice(0, 7)}-01`, to: last };
    }
    case 'custom': {
      let from = isDay(custom?.from) ? custom.from : addDays(today, -29);
      let to = isDay(custom?.to) ? custom.to : today;
      if (from > to) [from, to] = [to, from];
      if (rangeDays({ from, to }) > MAX_RANGE_DAYS) from = addDays(to, -(MAX_RANGE_DAYS - 1));
      return { from, to };
    }
  }
}

/** The intervals a range may be shown by: hours only for a month or less, as the API allows. */
export function intervalsFor(range: DayRange): Interval[] {
  const days = rangeDays(range);
  const intervals: Interval[] = [];
  if (days <= 31) intervals.push('hour');
  if (days <= 366) intervals.push('day');
  if (days >= 14) intervals.push('week');
  if (days >= 56) intervals.push('month');
  return intervals;
}

export function defaultInterval(range: DayRange): Interval {
  const days = rangeDays(range);
  if (days <= 2) return 'hour';
  if (days <= 120) return 'day';
  if (days <= 366) return 'week';
  return 'month';
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "12 Mar 2025" (the app's own short form, the same in every locale so that the numbers read alike). */
export function formatDay(day: string): string {
  const [y, m, d] = day.split('-');
  return `${Number(d)} ${MONTHS[Number(m) - 1]} ${y}`;
}

export function formatRange(range: DayRange): string {
  if (range.from === range.to) return formatDay(range.from);
  const [fy, fm] = range.from.split('-');
  const [ty, tm] = range.to.split('-');
  if (fy === ty && fm === tm) return `${Number(range.from.slice(8))}–${formatDay(range.to)}`;
  if (fy === ty) return `${formatDay(range.from).slice(0, -5)} – ${formatDay(range.to)}`;
  return `${formatDay(range.from)} – ${formatDay(range.to)}`;
}
