// Exchange rates the operator loads (`tally revenue rates load FILE.csv`), never fetched from anywhere, and
// the conversion of the revenue reports with them. Revenue is reported per currency and never summed across
// currencies; with `convert_to`, each currency's figures of a period are converted with that currency's rate
// of the period and then added, and the answer says so: `converted_to`, every rate it used, and the
// currencies it left out because no rate was loaded for them.
//
// A rate is decimal text (as loaded, at most 12 decimals): one unit of `currency` is `rate` units of `base`.
// A rate is for a month (YYYY-MM) or a day (YYYY-MM-DD). A day's figures use the day's rate, else its
// month's; a month's figures use the month's rate, else the last day's rate loaded in that month (the
// closing rate). Money stays exact: a figure in micro-units times the rate, held as a ratio of BigInts
// (digits / 10^decimals), is rounded once to the micro-unit, half to even, and the converted figures of a
// period are then added exactly. Each figure is converted on its own, so converted figures can differ by a
// micro-unit from the sums or differences of other converted figures.
import { divideRounded, formatMicros, toMicros } from '@tally/contract';
import type { Warehouse } from '@tally/warehouse';
import { isMonth, parseUtcDay, utcDayStart } from '../calendar.ts';
import type { DailyRevenue } from './daily.ts';
import type { Money } from './money.ts';
import { lifetimeValueMicros, type MonthlyRevenue } from './monthly.ts';
import { RevenueQueryError } from './scope.ts';

export interface ExchangeRate {
  /** The currency converted to. */
  base: string;
  /** The currency converted from. */
  currency: string;
  /** YYYY-MM or YYYY-MM-DD */
  period: string;
  /** Units of base per unit of currency, decimal text. */
  rate: string;
}

/** A rates file that cannot be loaded: which line and why (the file is the operator's own). */
export class ExchangeRateFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExchangeRateFileError';
  }
}

const CURRENCY = /^[A-Z]{3}$/;
const RATE = /^(\d{1,15})(?:\.(\d{1,12}))?$/;

/**
 * Reads a rates file: a header `month,currency,rate_to_EUR` or `date,currency,rate_to_EUR` (any base
 * currency in place of EUR), then one line per currency and period. Blank lines and lines starting with #
 * are skipped. Everything is checked before anything is loaded.
 */
export function parseExchangeRatesCsv(text: string): ExchangeRate[] {
  const lines = text.split(/\r?\n/);
  let headerAt = lines.findIndex((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (headerAt === -1) throw new ExchangeRateFileError('the file is empty');
  const header = (lines[headerAt] as string).split(',').map((c) => c.trim());
  const base = /^rate_to_([A-Za-z]{3})$/.exec(header[2] ?? '')?.[1]?.toUpperCase();
  if (
    header.length !== 3 ||
    (header[0] !== 'month' && header[0] !== 'date') ||
    header[1] !== 'currency' ||
    !base
  )
    throw new ExchangeRateFileError(
      `line ${headerAt + 1}: the header must be "month,currency,rate_to_XXX" or "date,currency,rate_to_XXX"`,
    );
  // A period as the header names it: a month, or a day as Date.parse reads it (then checked to be real).
  const isPeriod = (when: string) =>
    header[0] === 'month' ? isMonth(when) : !Number.isNaN(parseUtcDay(when));
  const rates: ExchangeRate[] = [];
  const seen = new Set<string>();
  for (let i = ++headerAt; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    const cells = line.split(',').map((c) => c.trim());
    const where = `line ${i + 1}`;
    if (cells.length !== 3) throw new ExchangeRateFileError(`${where}: expected 3 columns`);
    const [when, code, rate] = cells as [string, string, string];
    if (!isPeriod(when))
      throw new ExchangeRateFileError(
        `${where}: ${header[0]} must be ${header[0] === 'month' ? 'YYYY-MM' : 'YYYY-MM-DD'}`,
      );
    if (header[0] === 'date' && Number.isNaN(utcDayStart(when)))
      throw new ExchangeRateFileError(`${where}: not a real date`);
    const currency = code.toUpperCase();
    if (!CURRENCY.test(currency))
      throw new ExchangeRateFileError(`${where}: currency must be a three-letter code`);
    if (currency === base) throw new ExchangeRateFileError(`${where}: a rate from ${base} to itself`);
    if (!RATE.test(rate) || !/[1-9]/.test(rate))
      throw new ExchangeRateFileError(
        `${where}: the rate must be a positive decimal with at most 12 decimals`,
      );
    const key = `${currency}|${when}`;
    if (seen.has(key)) throw new ExchangeRateFileError(`${where}: ${currency} ${when} appears twice`);
    seen.add(key);
    rates.push({ base, currency, period: when, rate: normalRate(rate) });
  }
  if (rates.length === 0) throw new ExchangeRateFileError('the file has no rates');
  return rates;
}

/** A rate without leading zeros or trailing decimal zeros: "01.2500" → "1.25". */
function normalRate(rate: string): string {
  const [whole = '0', fraction = ''] = rate.split('.');
  const w = whole.replace(/^0+(?=\d)/, '');
  const f = fraction.replace(/0+$/, '');
  return f ? `${w}.${f}` : w;
}

let lastLoadedAt = 0;

/** Stores rates; a rate loaded again for the same base, currency and period replaces the earlier one. */
export async function loadExchangeRates(warehouse: Warehouse, rates: readonly ExchangeRate[]): Promise<void> {
  // The version of the ReplacingMergeTree: strictly later than this process's previous load, even within
  // one millisecond, so that the later of two loads always wins.
  const loadedAt = Math.max(Date.now(), lastLoadedAt + 1);
  lastLoadedAt = loadedAt;
  await warehouse.insert(
    'exchange_rates',
    rates.map((r) => ({ ...r, loaded_at: loadedAt })),
  );
}

/** The loaded rates (of one base, or all), by base, currency and period. */
export async function readExchangeRates(warehouse: Warehouse, base?: string): Promise<ExchangeRate[]> {
  return warehouse.query<ExchangeRate>(
    `SELECT base, currency, period, rate FROM exchange_rates FINAL
     ${base ? 'WHERE base = {base:String}' : ''}
     ORDER BY base, currency, period`,
    base ? { base } : {},
  );
}

/** micros × rate, rounded to the micro-unit half to even (the rate as digits / 10^decimals). */
export function convertMicros(micros: bigint, rate: string): bigint {
  const [whole = '0', fraction = ''] = rate.split('.');
  const numerator = micros * BigInt(`${whole}${fraction}`);
  const denominator = 10n ** BigInt(fraction.length);
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  let quotient = abs / denominator;
  const twice = 2n * (abs % denominator);
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) quotient += 1n;
  return negative ? -quotient : quotient;
}

/** One rate a converted answer used. */
export interface RateUsed {
  currency: string;
  /** The rate's own period (a month, or a day). */
  period: string;
  rate: string;
}

/** Rate look-up of one base: a day's rate, else its month's; a month's rate, else its last day's. */
export class RateTable {
  readonly base: string;
  readonly #rates = new Map<string, Map<string, string>>();

  constructor(base: string, rates: readonly ExchangeRate[]) {
    this.base = base;
    for (const r of rates) {
      if (r.base !== base) continue;
      let periods = this.#rates.get(r.currency);
      if (!periods) {
        periods = new Map();
        this.#rates.set(r.currency, periods);
      }
      periods.set(r.period, r.rate);
    }
  }

  get size(): number {
    return this.#rates.size;
  }

  /** The periods a rate of `currency` is loaded for. */
  periodsOf(currency: string): string[] {
    return [...(this.#rates.get(currency)?.keys() ?? [])];
  }

  /** The rate for a period (YYYY-MM or YYYY-MM-DD) of a currency, or null when none is loaded. */
  rateFor(currency: string, period: string): RateUsed | null {
    if (currency === this.base) return { currency, period, rate: '1' };
    const periods = this.#rates.get(currency);
    if (!periods) return null;
    const exact = periods.get(period);
    if (exact !== undefined) return { currency, period, rate: exact };
    if (period.length === 10) {
      const month = period.slice(0, 7);
      const rate = periods.get(month);
      return rate === undefined ? null : { currency, period: month, rate };
    }
    let closing: string | null = null;
    for (const p of periods.keys())
      if (p.length === 10 && p.startsWith(period) && (!closing || p > closing)) closing = p;
    return closing ? { currency, period: closing, rate: periods.get(closing) as string } : null;
  }
}

/**
 * The latest rate loaded for a currency (of any period; a month's counts as of its last day): what a figure
 * "now" (a customer's MRR today) is converted with, or null when none is loaded.
 */
export function latestRate(table: RateTable, currency: string): RateUsed | null {
  if (currency === table.base) return { currency, period: '', rate: '1' };
  let best: RateUsed | null = null;
  let bestKey = '';
  for (const period of table.periodsOf(currency)) {
    const key = period.length === 7 ? `${period}-32` : period;
    if (key > bestKey) {
      bestKey = key;
      best = table.rateFor(currency, period);
    }
  }
  return best;
}

/** The figures of one period, converted and added; marked with what was converted and what was left out. */
export interface Converted {
  converted_to: string;
  /** The rates used, one per currency added (the base itself is added at 1 and not listed). */
  rates: RateUsed[];
  /** Currencies with figures in the period but no rate loaded for it: left out of the sums. */
  missing_currencies: string[];
}

export type ConvertedMonth = Converted & {
  month: string;
  currency: string;
  /** Over the converted currencies' customers (one paying in two currencies counts in both). */
  customers_start: number;
  customers_end: number;
  churned_customers: number;
  /** As the report's (monthly.ts), from the converted figures and the counts above. */
  gross_revenue_churn_rate: number | null;
  net_revenue_churn_rate: number | null;
  customer_churn_rate: number | null;
  arpa: Money | null;
  ltv: Money | null;
} & Record<(typeof MONTH_MONEY)[number], Money>;

export type ConvertedDay = Converted & {
  date: string;
  currency: string;
} & Record<(typeof DAY_MONEY)[number], Money>;

const MONTH_MONEY = [
  'mrr_start',
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'mrr_end',
  'net_new',
  'cash_revenue',
] as const;
const DAY_MONEY = [
  'mrr',
  'arr',
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'net_new',
  'cash_revenue',
] as const;

/** The rate table of `base`, or a RevenueQueryError (a 400) when no rates to it are loaded. */
export async function rateTableFor(warehouse: Warehouse, base: string | undefined): Promise<RateTable> {
  const upper = (base ?? '').toUpperCase();
  if (!CURRENCY.test(upper)) throw new RevenueQueryError('convert_to must be a three-letter code');
  const table = new RateTable(upper, await readExchangeRates(warehouse, upper));
  if (table.size === 0)
    throw new RevenueQueryError(
      'no exchange rates to this currency are loaded (the operator loads them with `tally revenue rates load`)',
    );
  return table;
}

function convertRows<K extends string, F extends string>(
  rows: ReadonlyArray<Record<K, string> & Record<F, Money> & { currency: string }>,
  periodKey: K,
  fields: readonly F[],
  table: RateTable,
): Array<Converted & Record<K | F, string> & { currency: string }> {
  const periods = new Map<string, { sums: Map<F, bigint>; rates: RateUsed[]; missing: string[] }>();
  for (const row of rows) {
    const period = row[periodKey];
    let entry = periods.get(period);
    if (!entry) {
      entry = { sums: new Map(fields.map((f) => [f, 0n])), rates: [], missing: [] };
      periods.set(period, entry);
    }
    const rate = table.rateFor(row.currency, period);
    // A currency whose figures are all zero in the period has nothing to convert: not reported missing.
    if (!rate) {
      if (fields.some((f) => toMicros(row[f]) !== 0n)) entry.missing.push(row.currency);
      continue;
    }
    if (row.currency !== table.base) entry.rates.push(rate);
    for (const f of fields)
      entry.sums.set(f, (entry.sums.get(f) as bigint) + convertMicros(toMicros(row[f]), rate.rate));
  }
  return [...periods].map(([period, { sums, rates, missing }]) => {
    const out: Record<string, unknown> = { [periodKey]: period, currency: table.base };
    for (const f of fields) out[f] = formatMicros(sums.get(f) as bigint);
    out.converted_to = table.base;
    out.rates = rates;
    out.missing_currencies = missing;
    return out as Converted & Record<K | F, string> & { currency: string };
  });
}

/** A month's customer counts, added over the currencies converted (those with a rate for the month). */
type MonthCounts = Pick<ConvertedMonth, 'customers_start' | 'customers_end' | 'churned_customers'>;

/**
 * The monthly report (every currency of it) converted to the table's base: one row per month, from `from`
 * (the report may start earlier: LTV reads the churn rates of a month and the two before it, as the
 * report's own does). Customer counts are added over the currencies converted; the rates, ARPA and LTV are
 * computed from the converted figures as the report computes them from its own.
 */
export function convertMonthly(
  report: readonly MonthlyRevenue[],
  table: RateTable,
  from?: string,
): ConvertedMonth[] {
  const money = convertRows(report, 'month', MONTH_MONEY, table);
  const counts = new Map<string, MonthCounts>();
  for (const row of report) {
    if (!table.rateFor(row.currency, row.month)) continue;
    const c = counts.get(row.month) ?? { customers_start: 0, customers_end: 0, churned_customers: 0 };
    c.customers_start += row.customers_start;
    c.customers_end += row.customers_end;
    c.churned_customers += row.churned_customers;
    counts.set(row.month, c);
  }
  const rows = money.map((row) => {
    const c = counts.get(row.month) ?? { customers_start: 0, customers_end: 0, churned_customers: 0 };
    const micros = (field: (typeof MONTH_MONEY)[number]) => toMicros(row[field]);
    const mrrStart = micros('mrr_start');
    const ratio = (n: bigint, d: bigint) => (d === 0n ? null : Number(n) / Number(d));
    return {
      ...row,
      ...c,
      gross_revenue_churn_rate: ratio(micros('churn') + micros('contraction'), mrrStart),
      net_revenue_churn_rate: ratio(
        micros('churn') + micros('contraction') - micros('expansion') - micros('reactivation'),
        mrrStart,
      ),
      customer_churn_rate: ratio(BigInt(c.churned_customers), BigInt(c.customers_start)),
      arpa:
        c.customers_end === 0
          ? null
          : formatMicros(divideRounded(micros('mrr_end'), BigInt(c.customers_end))),
      ltv: null as Money | null,
    } as ConvertedMonth;
  });
  rows.forEach((row, i) => {
    row.ltv = lifetimeValueOf(rows.slice(Math.max(0, i - 2), i + 1), row);
  });
  return from === undefined ? rows : rows.filter((row) => row.month >= from);
}

/**
 * LTV of a converted month, as the report's (monthly.ts): ARPA ÷ the mean customer churn rate of the month
 * and the two before it that have one, as one exact fraction rounded once to the micro-unit.
 */
function lifetimeValueOf(window: readonly ConvertedMonth[], row: ConvertedMonth): Money | null {
  const ltv = lifetimeValueMicros(
    toMicros(row.mrr_end),
    row.customers_end,
    window.map((m) => ({ payingStart: m.customers_start, churned: m.churned_customers })),
  );
  return ltv === null ? null : formatMicros(ltv);
}

/** The daily report (every currency of it) converted to the table's base: one row per day. */
export function convertDaily(report: readonly DailyRevenue[], table: RateTable): ConvertedDay[] {
  return convertRows(report, 'date', DAY_MONEY, table) as ConvertedDay[];
}
