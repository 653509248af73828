// The reports' calendar: days (YYYY-MM-DD) and months (YYYY-MM) as the API and the CLI write them, the
// instants they start at in UTC (the revenue reports' days and months are UTC's), stepping by days and
// months, and a day in a time zone (the traffic figures' days are the project's). Every report, route and
// command reads, checks and steps its days and months here. What is not a day or a month comes back as NaN
// (or false): each caller answers it with its own error.

/** A day's length in ms (UTC has no daylight saving: every day of it is this long). */
export const DAY_MS = 86_400_000;

const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;
const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** Whether `day` is written YYYY-MM-DD (whether it is a real day is utcDayStart's question). */
export const isDayText = (day: string): boolean => DAY_TEXT.test(day);

/**
 * Midnight UTC of a YYYY-MM-DD day as Date.parse reads it (ms): a day number past its month's end, up to 31,
 * runs on into the next month (2026-02-30 is 2 March); NaN when it has no reading (2026-02-32, 2026-13-01).
 * utcDayStart refuses what is not a real day.
 */
export function parseUtcDay(day: string): number {
  return isDayText(day) ? Date.parse(`${day}T00:00:00Z`) : Number.NaN;
}

/** The UTC day (YYYY-MM-DD) of an instant (ms). */
export const utcDayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Midnight UTC starting a real YYYY-MM-DD day (ms), or NaN when it is not one (2026-02-30 is not). */
export function utcDayStart(day: string): number {
  const ms = parseUtcDay(day);
  return !Number.isNaN(ms) && utcDayOf(ms) === day ? ms : Number.NaN;
}

/** Midnight UTC after a real day (ms): the end of a range of days, for reading records up to it; else NaN. */
export const utcDayEnd = (day: string): number => utcDayStart(day) + DAY_MS;

/** Days since 1970-01-01 of a real day (a calendar date, no time zone), or NaN. */
export const dayNumber = (day: string): number => utcDayStart(day) / DAY_MS;

/** The day `n` days after 1970-01-01. */
export const dayOf = (n: number): string => utcDayOf(n * DAY_MS);

/** The day `days` after a real day (before it when negative); a RangeError for what is not a day. */
export const addDays = (day: string, days: number): string => dayOf(dayNumber(day) + days);

/** The same day a year earlier; 29 February (or any day the earlier year lacks) becomes the 28th. */
export function yearBefore(day: string): string {
  const year = Number(day.slice(0, 4)) - 1;
  const candidate = `${year}${day.slice(4)}`;
  return Number.isNaN(utcDayStart(candidate)) ? `${year}${day.slice(4, 8)}28` : candidate;
}

/** Whether `month` is a month YYYY-MM (01 to 12). */
export const isMonth = (month: string): boolean => MONTH.test(month);

/** Start of a YYYY-MM month in ms (UTC); `offset` months later. A RangeError for what is not a month. */
export function monthStart(month: string, offset = 0): number {
  const match = MONTH.exec(month);
  if (!match) throw new RangeError(`invalid month "${month}" (expected YYYY-MM)`);
  return Date.UTC(Number(match[1]), Number(match[2]) - 1 + offset, 1);
}

/** The UTC month (YYYY-MM) of an instant (ms). */
export const utcMonthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

/** The month `months` after `month` (before it when negative). */
export const addMonths = (month: string, months: number): string => utcMonthOf(monthStart(month, months));

/** How many months from…to covers, both included (0 or less when `to` is before `from`). */
export function monthSpan(from: string, to: string): number {
  const start = new Date(monthStart(from));
  const end = new Date(monthStart(to));
  return (end.getUTCFullYear() - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth() + 1;
}

/** The months from…to, both included (at most 100 years of them). */
export function monthsBetween(from: string, to: string): string[] {
  const months: string[] = [];
  const end = monthStart(to);
  for (let i = 0, start = monthStart(from); start <= end; start = monthStart(from, ++i)) {
    if (i > 1200) throw new RangeError('more than 100 years of months');
    months.push(utcMonthOf(start));
  }
  return months;
}

/** Today's date in a time zone (YYYY-MM-DD). */
export function todayIn(timeZone: string, now = Date.now()): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
}

/** Whether `timeZone` is an IANA time zone this runtime (and so, with the same database, ClickHouse) knows. */
export function isTimeZone(timeZone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(timeZone)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}
