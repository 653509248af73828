// The revenue reports of months and days as the read API answers them, one function per report: the MRR
// report (monthly, daily, converted with the operator's rates), attribution, the breakdown, the
// reconciliation of a month and the drill-down of a figure. Each takes one query value (parsed by its caller:
// the dashboard's route from the request, `tally report` from its flags; the filters already parsed) and the
// warehouse, reads the cached history (history-cache.ts) and returns the JSON body of GET …/revenue/…. Both
// front ends call these, so a filter one applies the other cannot ignore. The customers and the
// acquisition funnel are in customer-queries.ts.
import type { Warehouse } from '@tally/warehouse';
import { addMonths, monthStart, utcDayEnd } from '../calendar.ts';
import { type Attribution, convertedRevenueAttribution, revenueAttribution } from './attribution.ts';
import { convertedRevenueBreakdown, type RevenueBreakdown, revenueBreakdown } from './breakdown.ts';
import { checkDayRange, type DailyRevenue, dailyRevenue } from './daily.ts';
import { type Drilldown, type DrilldownFigure, revenueDrilldown } from './drilldown.ts';
import {
  type Converted,
  type ConvertedDay,
  type ConvertedMonth,
  convertDaily,
  convertMonthly,
  type RateTable,
  rateTableFor,
} from './exchange-rates.ts';
import {
  checkRevenueDimension,
  filterRevenueRecords,
  type RevenueFilter,
  readCustomerAttributes,
  readRevenueMetadataKeys,
} from './filters.ts';
import { readMrrInputsCached } from './history-cache.ts';
import { type MonthlyRevenue, monthlyRevenue } from './monthly.ts';
import { type Reconciliation, readStoredMovements, reconcile } from './reconciliation.ts';
import { type AttributionDimension, checkMonth, checkMonthRange, currencyOf, type Touch } from './scope.ts';
import { readCustomerTouchesCached } from './touches-cache.ts';

/** What every report of a range of months takes. */
export interface RevenueMonthsQuery {
  project: string;
  /** First and last month (YYYY-MM, UTC), both included. */
  from: string;
  to: string;
  /** A three-letter code; default USD (the MRR report: every currency). */
  currency?: string | undefined;
  /** The customers kept (revenue/filters.ts), parsed; none keeps every customer. */
  filters: readonly RevenueFilter[];
}

export interface RevenueMrrQuery extends RevenueMonthsQuery {
  /** Convert with the operator's rates to this currency, one row per month. */
  convert_to?: string | undefined;
}
export interface RevenueMrrDailyQuery {
  project: string;
  /** First and last day (YYYY-MM-DD, UTC), both included. */
  from: string;
  to: string;
  currency?: string | undefined;
  convert_to?: string | undefined;
}
export interface RevenueAttributionQuery extends RevenueMonthsQuery {
  by?: AttributionDimension | undefined;
  touch?: Touch | undefined;
}
export interface RevenueConvertibleAttributionQuery extends RevenueAttributionQuery {
  /** Convert every currency (or `currency`'s alone, when given) with the operator's rates to this one. */
  convert_to?: string | undefined;
}
export interface RevenueBreakdownQuery extends RevenueMonthsQuery {
  /** plan, interval, country, … or metadata.<key> (revenue/filters.ts). */
  by: string;
  /** Convert every currency (or `currency`'s alone, when given) with the operator's rates to this one. */
  convert_to?: string | undefined;
}
export interface RevenueReconciliationQuery {
  project: string;
  month: string;
  currency?: string | undefined;
}
export interface RevenueRecordsQuery extends RevenueAttributionQuery {
  figure: DrilldownFigure;
  /** The attribution group (of `by` and `touch`) whose items are listed; all customers' without it. */
  key?: string | undefined;
  offset?: number | undefined;
  limit?: number | undefined;
}

/** The records of the customers that `filters` keeps, attributes as of `until`. */
const restrict = (
  warehouse: Warehouse,
  query: { project: string; filters: readonly RevenueFilter[] },
  records: Parameters<typeof filterRevenueRecords>[1],
  until?: number,
) => filterRevenueRecords(warehouse, records, { project: query.project, filters: query.filters, until });

/** GET …/revenue/mrr: one row per month and currency, or per month converted to `convert_to`. */
export async function revenueMrrReport(
  warehouse: Warehouse,
  query: RevenueMrrQuery,
): Promise<MonthlyRevenue[] | ConvertedMonth[]> {
  checkMonthRange(query.from, query.to);
  const currency = query.currency?.toUpperCase();
  // The rates first: a convert_to without rates is refused before the history is read.
  const rates = query.convert_to ? await rateTableFor(warehouse, query.convert_to) : null;
  const until = monthStart(query.to, 1);
  const all = await readMrrInputsCached(warehouse, { project: query.project, until, currency });
  const records = await restrict(warehouse, query, all, until);
  const currencies = currency ? [currency] : undefined;
  if (!rates) return monthlyRevenue(records, query.from, query.to, currencies);
  // Converted from two months earlier: the LTV of the first months reads the churn rates before them.
  const early = addMonths(query.from, -2);
  return convertMonthly(monthlyRevenue(records, early, query.to, currencies), rates, query.from);
}

/** GET …/revenue/mrr/daily: one row per day (UTC) and currency, or per day converted to `convert_to`. */
export async function revenueMrrDailyReport(
  warehouse: Warehouse,
  query: RevenueMrrDailyQuery,
): Promise<DailyRevenue[] | ConvertedDay[]> {
  checkDayRange(query.from, query.to);
  const currency = query.currency?.toUpperCase();
  // The rates first: a convert_to without rates is refused before the history is read.
  const table = query.convert_to ? await rateTableFor(warehouse, query.convert_to) : null;
  const records = await readMrrInputsCached(warehouse, {
    project: query.project,
    until: utcDayEnd(query.to),
    currency,
  });
  const report = dailyRevenue(records, query.from, query.to, currency ? [currency] : undefined);
  return table ? convertDaily(report, table) : report;
}

/**
 * With convert_to: the rate table (a 400 when none is loaded, before the history is read) and the
 * currencies converted: `currency` alone when given, else every currency of the project's records.
 */
async function conversionOf(
  warehouse: Warehouse,
  query: { currency?: string | undefined; convert_to?: string | undefined },
): Promise<{ table: RateTable; currency: string | undefined } | null> {
  if (!query.convert_to) return null;
  const table = await rateTableFor(warehouse, query.convert_to);
  return { table, currency: query.currency === undefined ? undefined : currencyOf(query.currency) };
}

const currenciesOf = (records: readonly { currency: string }[]): string[] =>
  [...new Set(records.map((r) => r.currency))].sort();

/**
 * GET …/revenue/attribution: the months' MRR by the first or last touch's channel, source or campaign;
 * with convert_to, every currency converted and added (converted-groups.ts).
 */
export async function revenueAttributionReport(
  warehouse: Warehouse,
  query: RevenueConvertibleAttributionQuery,
): Promise<Attribution | (Attribution & Converted)> {
  checkMonthRange(query.from, query.to);
  const conversion = await conversionOf(warehouse, query);
  const currency = conversion ? conversion.currency : currencyOf(query.currency);
  const until = monthStart(query.to, 1);
  const [all, touches] = await Promise.all([
    readMrrInputsCached(warehouse, { project: query.project, until, currency }),
    readCustomerTouchesCached(warehouse, query.project),
  ]);
  const records = await restrict(warehouse, query, all, until);
  const options = {
    from: query.from,
    to: query.to,
    by: query.by ?? 'channel',
    touch: query.touch ?? 'first',
    touches,
  } as const;
  if (conversion)
    return convertedRevenueAttribution(records, {
      ...options,
      currencies: currency ? [currency] : currenciesOf(all),
      table: conversion.table,
    });
  return revenueAttribution(records, { ...options, currency: currency as string });
}

/**
 * GET …/revenue/breakdown: the months' MRR by plan, interval, country, … or a metadata key; with
 * convert_to, every currency converted and added (converted-groups.ts).
 */
export async function revenueBreakdownReport(
  warehouse: Warehouse,
  query: RevenueBreakdownQuery,
): Promise<(RevenueBreakdown | (RevenueBreakdown & Converted)) & { metadata_keys: string[] }> {
  checkMonthRange(query.from, query.to);
  checkRevenueDimension(query.by);
  const conversion = await conversionOf(warehouse, query);
  const currency = conversion ? conversion.currency : currencyOf(query.currency);
  const until = monthStart(query.to, 1);
  const [all, attributes, keys] = await Promise.all([
    readMrrInputsCached(warehouse, { project: query.project, until, currency }),
    readCustomerAttributes(warehouse, { project: query.project, dimensions: [query.by], until }),
    readRevenueMetadataKeys(warehouse, query.project),
  ]);
  const records = await restrict(warehouse, query, all, until);
  const values = attributes.get(query.by) ?? new Map<string, string>();
  const options = { from: query.from, to: query.to, by: query.by, values };
  const body = conversion
    ? convertedRevenueBreakdown(records, {
        ...options,
        currencies: currency ? [currency] : currenciesOf(all),
        table: conversion.table,
      })
    : revenueBreakdown(records, { ...options, currency: currency as string });
  return { ...body, metadata_keys: keys };
}

/** GET …/revenue/reconciliation: a month's cash against its MRR bridge and the stored movements. */
export async function revenueReconciliationReport(
  warehouse: Warehouse,
  query: RevenueReconciliationQuery,
): Promise<Reconciliation> {
  checkMonth(query.month);
  const currency = currencyOf(query.currency);
  const [records, stored] = await Promise.all([
    readMrrInputsCached(warehouse, { project: query.project, until: monthStart(query.month, 1), currency }),
    readStoredMovements(warehouse, { project: query.project, month: query.month, currency }),
  ]);
  return reconcile(records, { month: query.month, currency, stored });
}

/** GET …/revenue/records: the items behind a figure, of every customer or of one attribution group. */
export async function revenueRecordsReport(
  warehouse: Warehouse,
  query: RevenueRecordsQuery,
): Promise<Drilldown> {
  checkMonthRange(query.from, query.to);
  const currency = currencyOf(query.currency);
  const until = monthStart(query.to, 1);
  const [all, touches] = await Promise.all([
    readMrrInputsCached(warehouse, { project: query.project, until, currency }),
    query.key === undefined ? null : readCustomerTouchesCached(warehouse, query.project),
  ]);
  const records = await restrict(warehouse, query, all, until);
  return revenueDrilldown(records, {
    figure: query.figure,
    from: query.from,
    to: query.to,
    currency,
    ...(query.offset !== undefined ? { offset: query.offset } : {}),
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(touches && query.key !== undefined
      ? { group: { by: query.by ?? 'channel', touch: query.touch ?? 'first', key: query.key, touches } }
      : {}),
  });
}
