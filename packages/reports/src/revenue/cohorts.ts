// The cohort report of docs/revenue.md (Cohorts and lifetime value): customers grouped by the month their
// MRR first rose above 0 (their new-business movement), and for each cohort month and each month after it
// up to `to` (a triangle), how many of them still pay, their MRR, and the logo, net and gross MRR retention.
// Built on the MRR report's own fold (MrrLedger over the records in byRecordTime order), so a cohort's MRR
// at an offset is what the MRR report gives for those customers at the end of that month. One currency,
// or with `convert_to` every currency (or `currency`) converted with each month's rate and added up per
// customer (a customer's cohort is then its earliest in any currency).
import { formatMicros } from '@tally/contract';
import type { Warehouse } from '@tally/warehouse';
import { monthStart, monthsBetween, utcMonthOf } from '../calendar.ts';
import { convertMicros, type RateTable, type RateUsed, rateTableFor } from './exchange-rates.ts';
import { filterRevenueRecords, type RevenueFilter } from './filters.ts';
import { readMrrInputsCached } from './history-cache.ts';
import { byRecordTime, type MrrInput, MrrLedger } from './ledger.ts';
import { type Money, rate } from './money.ts';
import { checkMonthRange, currencyOf } from './scope.ts';

export interface RevenueCohortsQuery {
  project: string;
  /** First and last cohort month (YYYY-MM, UTC), both included; `to` is also the last month shown. */
  from: string;
  to: string;
  /** A three-letter code; default USD (with convert_to: every currency when not given). */
  currency?: string | undefined;
  /** The customers kept (revenue/filters.ts), parsed; none keeps every customer. */
  filters: readonly RevenueFilter[];
  /** Convert with the operator's rates to this currency and add the currencies up per customer. */
  convert_to?: string | undefined;
}

/** One cohort at one offset: the state when month `cohort + offset` ends. */
export interface CohortMonth {
  offset: number;
  /** YYYY-MM: the cohort month + offset. */
  month: string;
  /** The cohort's customers with MRR above 0. */
  customers: number;
  /** The cohort's MRR. */
  mrr: Money;
  /** customers / size; null when the cohort has no customers. */
  logo_retention: number | null;
  /** mrr / the cohort's MRR at offset 0; null when that is 0. */
  net_mrr_retention: number | null;
  /** The same with each customer counted at most at its own MRR at offset 0; null when that is 0. */
  gross_mrr_retention: number | null;
}

export interface Cohort {
  /** YYYY-MM */
  cohort: string;
  size: number;
  months: CohortMonth[];
}

export interface RevenueCohorts {
  currency: string;
  cohorts: Cohort[];
  /** With convert_to: the base, the rates used and the currencies left out for want of a rate. */
  converted_to?: string;
  rates?: RateUsed[];
  missing_currencies?: string[];
}

/** Per customer: its cohort month and its MRR at the end of each month from…to (micro-units). */
interface CustomerSeries {
  cohort: string;
  mrr: bigint[];
}

/**
 * Each customer's cohort month and its MRR at the end of each of `months` (consecutive), folding one
 * currency's records (any order) through the MRR ledger. Records after the last month are ignored.
 */
function customerSeries(records: readonly MrrInput[], currency: string, months: readonly string[]) {
  const ordered = records.filter((r) => r.currency === currency).sort(byRecordTime);
  const ledger = new MrrLedger(currency);
  const series = new Map<string, CustomerSeries>();
  let next = 0;
  const apply = (until: number) => {
    for (; next < ordered.length && (ordered[next] as MrrInput).timestamp < until; next++) {
      const record = ordered[next] as MrrInput;
      const { movement } = ledger.apply(record);
      if (movement?.kind === 'new')
        series.set(record.customer_id, {
          cohort: utcMonthOf(record.timestamp),
          mrr: new Array<bigint>(months.length).fill(0n),
        });
    }
  };
  // Before the first month only the cohorts are needed (a customer's first MRR may be long before).
  apply(monthStart(months[0] as string));
  months.forEach((month, i) => {
    apply(monthStart(month, 1));
    for (const [customer, s] of series)
      if (s.cohort >= (months[0] as string)) s.mrr[i] = ledger.customerMrr(customer);
  });
  return series;
}

/**
 * The cohort triangle of cohorts `from`…`to` from these records (already narrowed to one project and the
 * customers kept). Without `table`: `currency`'s records only. With it: every currency of `currencies`
 * converted with each month's rate (a currency without a rate for a month is left out of that month).
 */
export function revenueCohorts(
  records: readonly MrrInput[],
  from: string,
  to: string,
  options: { currency: string; currencies?: readonly string[]; table?: RateTable },
): RevenueCohorts {
  const months = monthsBetween(from, to);
  const { table } = options;
  const currencies = table
    ? (options.currencies ?? [...new Set(records.map((r) => r.currency))].sort())
    : [options.currency];
  const customers = new Map<string, CustomerSeries>();
  const used = new Map<string, RateUsed>();
  const missing = new Set<string>();
  for (const currency of currencies) {
    for (const [customer, s] of customerSeries(records, currency, months)) {
      let mrr = s.mrr;
      if (table) {
        mrr = s.mrr.map((v, i) => {
          if (v === 0n) return 0n;
          const found = table.rateFor(currency, months[i] as string);
          if (!found) {
            if ((months[i] as string) >= from) missing.add(currency);
            return 0n;
          }
          if (currency !== table.base && (months[i] as string) >= from)
            used.set(`${found.currency}|${found.period}`, found);
          return convertMicros(v, found.rate);
        });
      }
      const known = customers.get(customer);
      if (!known) customers.set(customer, { cohort: s.cohort, mrr });
      else {
        if (s.cohort < known.cohort) known.cohort = s.cohort;
        known.mrr = known.mrr.map((v, i) => v + (mrr[i] as bigint));
      }
    }
  }
  const byCohort = new Map<string, CustomerSeries[]>();
  for (const s of customers.values()) {
    if (s.cohort < from || s.cohort > to) continue;
    const group = byCohort.get(s.cohort) ?? [];
    group.push(s);
    byCohort.set(s.cohort, group);
  }
  const cohorts: Cohort[] = [];
  for (const cohort of monthsBetween(from, to)) {
    const members = byCohort.get(cohort);
    if (!members) continue;
    const start = months.indexOf(cohort);
    const base = members.reduce((sum, m) => sum + (m.mrr[start] as bigint), 0n);
    const size = members.length;
    const rows: CohortMonth[] = [];
    for (let i = start; i < months.length; i++) {
      let paying = 0;
      let mrr = 0n;
      let capped = 0n;
      for (const m of members) {
        const now = m.mrr[i] as bigint;
        const atStart = m.mrr[start] as bigint;
        if (now > 0n) paying++;
        mrr += now;
        capped += now < atStart ? now : atStart;
      }
      rows.push({
        offset: i - start,
        month: months[i] as string,
        customers: paying,
        mrr: formatMicros(mrr),
        logo_retention: rate(BigInt(paying), BigInt(size)),
        net_mrr_retention: rate(mrr, base),
        gross_mrr_retention: rate(capped, base),
      });
    }
    cohorts.push({ cohort, size, months: rows });
  }
  if (!table) return { currency: options.currency, cohorts };
  return {
    currency: table.base,
    cohorts,
    converted_to: table.base,
    rates: [...used.values()].sort((a, b) =>
      a.currency === b.currency ? (a.period < b.period ? -1 : 1) : a.currency < b.currency ? -1 : 1,
    ),
    missing_currencies: [...missing].sort(),
  };
}

/** GET …/revenue/cohorts (and `tally report cohorts`): the cohort triangle of one project. */
export async function revenueCohortsReport(
  warehouse: Warehouse,
  query: RevenueCohortsQuery,
): Promise<RevenueCohorts> {
  checkMonthRange(query.from, query.to);
  // The rates first: a convert_to without rates is refused before the history is read.
  const table = query.convert_to ? await rateTableFor(warehouse, query.convert_to) : undefined;
  const currency = table
    ? query.currency === undefined
      ? undefined
      : currencyOf(query.currency)
    : currencyOf(query.currency);
  const until = monthStart(query.to, 1);
  const all = await readMrrInputsCached(warehouse, { project: query.project, until, currency });
  const records = await filterRevenueRecords(warehouse, all, {
    project: query.project,
    filters: query.filters,
    until,
  });
  return revenueCohorts(records, query.from, query.to, {
    currency: currency ?? table?.base ?? 'USD',
    currencies: currency ? [currency] : undefined,
    table,
  });
}
