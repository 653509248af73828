// What the revenue views share, as pure functions with unit tests: money as the API sends it (exact decimal
// text, computed in BigInt micro-units, never through a float; how it reads is ../money.ts), months, and the
// query-string state of the revenue pages.

/** Money for a chart axis or bar: a double is fine there (the exact text is in the tables beside). */
export const moneyNumber = (text: string | null | undefined) => (text ? Number(text) : 0);

/** Exact decimal text as integer micro-units (the API's money has at most 6 decimals). */
export function microsOf(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const micros = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
  return negative ? -micros : micros;
}

/** Micro-units as exact decimal text ("1280", "-12.5"). */
export function moneyOfMicros(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const rest = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / 1_000_000n}${rest ? `.${rest}` : ''}`;
}

/** 12 × MRR, exactly, as decimal text. */
export const timesTwelve = (text: string) => moneyOfMicros(microsOf(text) * 12n);

export const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** YYYY-MM `offset` months after `month`. */
export function addMonths(month: string, offset: number): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const d = new Date(Date.UTC(y, m - 1 + offset, 1));
  return d.toISOString().slice(0, 7);
}

/** The last day of a month, YYYY-MM-DD. */
export const lastDay = (month: string) =>
  new Date(Date.parse(`${addMonths(month, 1)}-01T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

export function monthLabel(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1, 1)).toLocaleDateString(undefined, {
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  });
}

/** A timestamp (ISO) as the reader's date and time in UTC, to the minute. */
export const formatTime = (iso: string | null) =>
  iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '—';

export interface RevenueState {
  from: string;
  to: string;
  currency: string;
  by: 'channel' | 'source' | 'utm_campaign';
  touch: 'first' | 'last';
  month: string;
  /** The revenue filters in the API's syntax (revenue-breakdown.tsx), '' for none. */
  filters: string;
  /** The breakdown's dimension: plan, interval, …, payment_processor or metadata.<key>. */
  breakdown: string;
  /** The MRR chart's points: the end of each month or of each day. */
  interval: 'month' | 'day';
  /** The MRR chart converted to this currency with the operator's rates, '' for the view's currency. */
  convert: string;
  /** The cohort table's retention: logo_retention, net_mrr_retention or gross_mrr_retention. */
  retention: 'logo_retention' | 'net_mrr_retention' | 'gross_mrr_retention';
}

/**
 * The revenue pages' state from the query string (`?from=2026-01&to=2026-06&currency=EUR&by=source`,
 * `&interval=day&convert=EUR` for the MRR chart).
 */
export function readRevenueState(query: Record<string, string>, today: string): RevenueState {
  const current = today.slice(0, 7);
  const to = MONTH.test(query.to ?? '') ? (query.to as string) : current;
  const fromAsked = MONTH.test(query.from ?? '') ? (query.from as string) : addMonths(to, -11);
  const from = fromAsked <= to ? fromAsked : to;
  const month =
    MONTH.test(query.month ?? '') && (query.month as string) >= from && (query.month as string) <= to
      ? (query.month as string)
      : to;
  return {
    from,
    to,
    currency: /^[A-Za-z]{3}$/.test(query.currency ?? '') ? (query.currency as string).toUpperCase() : 'USD',
    by: query.by === 'source' || query.by === 'utm_campaign' ? query.by : 'channel',
    touch: query.touch === 'last' ? 'last' : 'first',
    month,
    filters: query.filters ?? '',
    breakdown: /^([a-z_]+|metadata\..+)$/s.test(query.breakdown ?? '') ? (query.breakdown as string) : 'plan',
    interval: query.interval === 'day' ? 'day' : 'month',
    convert: /^[A-Za-z]{3}$/.test(query.convert ?? '') ? (query.convert as string).toUpperCase() : '',
    retention:
      query.retention === 'net_mrr_retention' || query.retention === 'gross_mrr_retention'
        ? query.retention
        : 'logo_retention',
  };
}

export function revenueSearch(state: RevenueState, today: string): string {
  const defaults = readRevenueState({}, today);
  const params = new URLSearchParams();
  for (const key of [
    'from',
    'to',
    'currency',
    'by',
    'touch',
    'filters',
    'breakdown',
    'interval',
    'convert',
    'retention',
  ] as const)
    if (state[key] !== defaults[key]) params.set(key, state[key]);
  // The reconciled month defaults to the range's last.
  if (state.month !== state.to) params.set('month', state.month);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export const FIGURE_NAMES: Record<string, string> = {
  new: 'New business MRR',
  expansion: 'Expansion MRR',
  reactivation: 'Reactivation MRR',
  contraction: 'Contraction MRR',
  churn: 'Churned MRR',
  mrr_start: 'MRR at the start',
  mrr_end: 'MRR at the end',
  cash_revenue: 'Cash revenue',
  paying_customers: 'Paying customers',
};
