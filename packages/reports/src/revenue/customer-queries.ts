// The revenue reports about customers as the read API answers them, one function per report: the list of
// customers (a page of it), one customer's page, and the acquisition funnel (visitors to paying customers).
// Each takes one query value (parsed by its caller: the dashboard's route or `tally report`) and the
// warehouse and returns the JSON body of GET …/revenue/customers, …/revenue/customers/{customer_id} and
// …/revenue/funnel; the reports of months are in queries.ts.
import type { Warehouse } from '@tally/warehouse';
import {
  type CustomerSort,
  type CustomerStatus,
  type CustomerSummary,
  customerList,
  customerListPage,
  type MrrHistoryPoint,
  mrrHistory,
  readCustomerContacts,
  readCustomerRecords,
  readVisitTimeline,
  type TimelineVisit,
} from './customers.ts';
import { type Converted, rateTableFor } from './exchange-rates.ts';
import { filterRevenueRecords, type RevenueFilter } from './filters.ts';
import { type AcquisitionFunnel, acquisitionFunnel } from './funnel.ts';
import { readMrrInputs } from './history.ts';
import { readMrrInputsCached } from './history-cache.ts';
import { type AttributionDimension, currencyOf } from './scope.ts';
import type { StoredRevenueRecord } from './search.ts';
import { readCustomerTouches, type Touchpoint } from './touches.ts';

export interface RevenueCustomersQuery {
  project: string;
  currency?: string | undefined;
  /** The customers kept (revenue/filters.ts), parsed. */
  filters: readonly RevenueFilter[];
  offset?: number | undefined;
  /** Most customers (default 100). */
  limit?: number | undefined;
  /** Only the customers whose id, name or email contains it, case aside. */
  search?: string | undefined;
  status?: CustomerStatus | undefined;
  sort?: CustomerSort | undefined;
  order?: 'asc' | 'desc' | undefined;
  /**
   * Convert every currency (or `currency`'s alone, when given) with the operator's rates: one row per
   * customer, its MRR now at each currency's latest rate, its cash at each record's month's rate.
   */
  convert_to?: string | undefined;
}
export interface RevenueCustomers extends Partial<Converted> {
  currency: string;
  total: number;
  offset: number;
  customers: CustomerSummary[];
}

export interface RevenueCustomerQuery {
  project: string;
  customer_id: string;
  /**
   * Convert the customer's figures of every currency with the operator's rates, as the list converts its
   * row (its MRR now at each currency's latest rate, its cash at each record's month's rate): one summary.
   */
  convert_to?: string | undefined;
}
type TouchJson = Omit<Touchpoint, 'start'> & { start: string };
export interface RevenueCustomer extends Partial<Converted> {
  customer_id: string;
  summaries: CustomerSummary[];
  first_touch: TouchJson | null;
  last_touch: TouchJson | null;
  identified_at: string | null;
  history: MrrHistoryPoint[];
  records: Omit<StoredRevenueRecord, 'project_id'>[];
  visits: TimelineVisit[];
}

export interface RevenueFunnelQuery {
  project: string;
  /** First and last day (YYYY-MM-DD) in the project's time zone. */
  from: string;
  to: string;
  /** The project's time zone (default UTC). */
  timeZone: string;
  by?: AttributionDimension | undefined;
  currency?: string | undefined;
  /**
   * Convert the customers' money of every currency (or `currency`'s alone, when given) as the converted
   * customer list does: MRR now at each currency's latest rate, cash at each payment's month's rate.
   */
  convert_to?: string | undefined;
}

const touchJson = (t: Touchpoint | null | undefined): TouchJson | null =>
  t ? { ...t, start: new Date(t.start).toISOString() } : null;

/**
 * GET …/revenue/customers: a page of the customers the filters, the search and the status keep, by MRR
 * (then cash, then id), or by lifetime cash, first seen or id.
 */
export async function revenueCustomersReport(
  warehouse: Warehouse,
  query: RevenueCustomersQuery,
): Promise<RevenueCustomers> {
  // The rates first: a convert_to without rates is refused before the history is read.
  const table = query.convert_to ? await rateTableFor(warehouse, query.convert_to) : undefined;
  const picked = table && query.currency === undefined ? undefined : currencyOf(query.currency);
  const all = await readMrrInputsCached(warehouse, { project: query.project, currency: picked });
  const records = await filterRevenueRecords(warehouse, all, {
    project: query.project,
    filters: query.filters,
  });
  const offset = query.offset ?? 0;
  const currency = table ? table.base : (picked as string);
  // The touches of the page's customers only: the list's order does not depend on them.
  const { total, customers, ...converted } = await customerListPage(warehouse, records, {
    project: query.project,
    currency,
    table,
    currencies: picked ? [picked] : [...new Set(all.map((r) => r.currency))].sort(),
    offset,
    limit: query.limit ?? 100,
    search: query.search,
    status: query.status,
    sort: query.sort,
    order: query.order,
  });
  return { currency, total, offset, customers, ...converted };
}

/**
 * GET …/revenue/customers/{customer_id}: one customer's figures per currency (converted: one summary in the
 * target currency, marked as the list's), touches, MRR history, records and visits (never converted); null
 * when the project knows no such customer (no revenue, no visit, never identified).
 */
export async function revenueCustomerReport(
  warehouse: Warehouse,
  query: RevenueCustomerQuery,
): Promise<RevenueCustomer | null> {
  const { project, customer_id: customer } = query;
  // The rates first: a convert_to without rates is refused before anything else is read.
  const table = query.convert_to ? await rateTableFor(warehouse, query.convert_to) : undefined;
  const [inputs, touches, records, timeline, contacts] = await Promise.all([
    readMrrInputs(warehouse, { project, customers: [customer] }),
    readCustomerTouches(warehouse, project, [customer]),
    readCustomerRecords(warehouse, project, customer),
    readVisitTimeline(warehouse, project, customer),
    readCustomerContacts(warehouse, project, [customer]),
  ]);
  if (inputs.length === 0 && timeline.visits.length === 0 && timeline.identified_at === null) return null;
  const currencies = [...new Set(inputs.map((r) => r.currency))].sort();
  const touch = touches.get(customer);
  // Converted: the customer's row of the converted list (customerListPage), with the rates it used.
  const converted = table
    ? await customerListPage(warehouse, inputs, {
        project,
        currency: table.base,
        table,
        currencies,
        offset: 0,
        limit: 1,
      })
    : undefined;
  const { total: _total, customers: convertedSummaries, ...marks } = converted ?? { total: 0, customers: [] };
  return {
    customer_id: customer,
    summaries: converted
      ? convertedSummaries
      : currencies.flatMap((currency) => customerList(inputs, { currency, touches, contacts })),
    ...marks,
    first_touch: touchJson(touch?.first),
    last_touch: touchJson(touch?.last),
    identified_at: timeline.identified_at,
    history: mrrHistory(inputs),
    records: records.map(({ project_id: _p, ...r }) => r),
    visits: timeline.visits,
  };
}

/** GET …/revenue/funnel: visitors, signups and paying customers of the range, by channel, source or campaign. */
export async function revenueFunnelReport(
  warehouse: Warehouse,
  query: RevenueFunnelQuery,
): Promise<AcquisitionFunnel> {
  // The rates first: a convert_to without rates is refused before the history is read.
  const table = query.convert_to ? await rateTableFor(warehouse, query.convert_to) : undefined;
  const picked = table && query.currency === undefined ? undefined : currencyOf(query.currency);
  const records = await readMrrInputsCached(warehouse, { project: query.project, currency: picked });
  return acquisitionFunnel(warehouse, records, {
    project: query.project,
    timeZone: query.timeZone,
    from: query.from,
    to: query.to,
    by: query.by ?? 'channel',
    currency: table ? table.base : (picked as string),
    table,
    currencies: picked ? [picked] : [...new Set(records.map((r) => r.currency))].sort(),
  });
}
