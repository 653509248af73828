// What the revenue views are asked for, checked once: months (YYYY-MM, calendar months in UTC), a month
// range, a currency, an attribution dimension and touch. A bad one is a RevenueQueryError (the dashboard
// answers 400 with its fixed message, which never quotes the request).
import { isMonth, monthSpan } from '../calendar.ts';

export class RevenueQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RevenueQueryError';
  }
}

export const ATTRIBUTION_DIMENSIONS = ['channel', 'source', 'utm_campaign'] as const;
export type AttributionDimension = (typeof ATTRIBUTION_DIMENSIONS)[number];
export const TOUCHES = ['first', 'last'] as const;
export type Touch = (typeof TOUCHES)[number];

/** At most this many months in one revenue query (the MRR report folds every month of it). */
export const MAX_REVENUE_MONTHS = 120;

/** Checks a month (YYYY-MM with a real month). */
export function checkMonth(month: string, what = 'month'): void {
  if (!isMonth(month)) throw new RevenueQueryError(`${what} must be a month YYYY-MM`);
}

/** Checks a month range: real months, `from` not after `to`, at most MAX_REVENUE_MONTHS. */
export function checkMonthRange(from: string, to: string): void {
  checkMonth(from, 'from');
  checkMonth(to, 'to');
  if (from > to) throw new RevenueQueryError('from must not be after to');
  if (monthSpan(from, to) > MAX_REVENUE_MONTHS)
    throw new RevenueQueryError(`a revenue range covers at most ${MAX_REVENUE_MONTHS} months`);
}

/** The currency of a revenue view: upper case, USD (the contract's default) when not given. */
export function currencyOf(currency: string | undefined): string {
  const upper = (currency ?? 'USD').toUpperCase();
  if (!/^[A-Z]{3}$/.test(upper)) throw new RevenueQueryError('currency must be a three-letter code');
  return upper;
}
