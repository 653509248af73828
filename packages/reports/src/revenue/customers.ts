// Customers of a project (docs/revenue.md): the list (current MRR, status, first seen, first-touch channel
// and source, lifetime cash revenue) and one customer's page: MRR history per subscription, every revenue
// record, and the visit timeline of the customer's visitors before and after identify. MRR comes from
// the fold of ledger.ts over all of a currency's records, as every other revenue figure.
import { formatMicros } from '@tally/contract';
import type { Warehouse } from '@tally/warehouse';
import { utcMonthOf } from '../calendar.ts';
import {
  type Converted,
  convertMicros,
  latestRate,
  type RateTable,
  type RateUsed,
} from './exchange-rates.ts';
import { type HistoryChange, memoOnFrozen } from './history.ts';
import { byRecordTime, type MovementKind, type MrrInput, MrrLedger } from './ledger.ts';
import type { Money } from './money.ts';
import {
  STORED_RECORD_COLUMNS,
  type StoredRecordRow,
  type StoredRevenueRecord,
  storedRecord,
} from './search.ts';
import {
  type CustomerTouches,
  LINKED_VISITORS_SQL,
  readCustomerTouches,
  type Touchpoint,
} from './touches.ts';

export type CustomerStatus = 'active' | 'churned' | 'one_off';

export interface CustomerSummary {
  customer_id: string;
  /** From its latest revenue record whose metadata has a `name` (or `email`); null when none has. */
  name: string | null;
  email: string | null;
  currency: string;
  mrr: Money;
  /** active: MRR above zero now; churned: had MRR, has none now; one_off: never had MRR. */
  status: CustomerStatus;
  /** The earlier of its first revenue record and its first-touch visit, ISO 8601. */
  first_seen: string;
  first_touch: Pick<Touchpoint, 'channel' | 'source' | 'utm_campaign'> | null;
  cash_revenue: Money;
  records: number;
}

export interface CustomerState {
  first: number;
  cash: bigint;
  records: number;
}

/** The fold of a currency's whole history: every customer's MRR now, first record, cash and records. */
export interface HistoryFold {
  ledger: MrrLedger;
  states: ReadonlyMap<string, Readonly<CustomerState>>;
  /** Customers with a purchase record. */
  purchased: ReadonlySet<string>;
  /** Every customer by MRR now (largest first), then cash, then id. */
  ranked: ReadonlyArray<{ customer: string; mrr: bigint; state: Readonly<CustomerState> }>;
}

const histories = new WeakMap<readonly MrrInput[], Map<string, HistoryFold>>();

/**
 * Folds all of `currency`'s records (the customer list and the funnel read it). Of a frozen array (the
 * cached history) it is computed once per currency and shared: callers only read it.
 */
export function foldHistory(records: readonly MrrInput[], currency: string): HistoryFold {
  return memoOnFrozen(
    histories,
    records,
    currency,
    () => computeHistory(records, currency),
    (previous, change) => refoldHistory(previous, change, currency),
  );
}

type Ranked = HistoryFold['ranked'][number];

/** The list's order: MRR now (largest first), then cash, then id. */
const byRank = (a: Ranked, b: Ranked): number =>
  (a.mrr < b.mrr ? 1 : a.mrr > b.mrr ? -1 : 0) ||
  (a.state.cash < b.state.cash ? 1 : a.state.cash > b.state.cash ? -1 : 0) ||
  (a.customer < b.customer ? -1 : a.customer > b.customer ? 1 : 0);

function computeHistory(records: readonly MrrInput[], currency: string): HistoryFold {
  const ledger = new MrrLedger(currency);
  const states = new Map<string, CustomerState>();
  const purchased = new Set<string>();
  for (const record of records.filter((r) => r.currency === currency).sort(byRecordTime)) {
    ledger.apply(record);
    const state = states.get(record.customer_id) ?? { first: record.timestamp, cash: 0n, records: 0 };
    state.cash += record.amount;
    state.records += 1;
    states.set(record.customer_id, state);
    if (record.event_type === 'purchase') purchased.add(record.customer_id);
  }
  const ranked = [...states.entries()].map(([customer, state]) => ({
    customer,
    mrr: ledger.customerMrr(customer),
    state,
  }));
  ranked.sort(byRank);
  return { ledger, states, purchased, ranked };
}

/**
 * The history fold of a refreshed history from the one before it: the changed customers folded alone
 * (their state depends on their own records only) and put in place of theirs; the ranking merged.
 */
function refoldHistory(previous: HistoryFold, change: HistoryChange, currency: string): HistoryFold {
  const changed = computeHistory(change.after, currency);
  const ledger = previous.ledger.withCustomersOf(
    changed.ledger,
    change.customers,
    change.before.filter((r) => r.currency === currency),
  );
  const states = new Map(previous.states);
  const purchased = new Set(previous.purchased);
  for (const customer of change.customers) {
    states.delete(customer);
    purchased.delete(customer);
  }
  for (const [customer, state] of changed.states) states.set(customer, state);
  for (const customer of changed.purchased) purchased.add(customer);
  const ranked: Ranked[] = [];
  let next = 0;
  for (const entry of previous.ranked) {
    if (change.customers.has(entry.customer)) continue;
    for (; next < changed.ranked.length && byRank(changed.ranked[next] as Ranked, entry) < 0; next++) {
      ranked.push(changed.ranked[next] as Ranked);
    }
    ranked.push(entry);
  }
  for (; next < changed.ranked.length; next++) ranked.push(changed.ranked[next] as Ranked);
  return { ledger, states, purchased, ranked };
}

/** Every customer with a record of `currency`, by MRR (largest first), then cash, then id. */
/** A customer's name and email, as its revenue records' metadata (`name`, `email`) last gave them. */
export interface CustomerContact {
  name: string | null;
  email: string | null;
}

/**
 * The names and emails of a project's customers (all of them, or those listed): each from the customer's
 * latest revenue record whose metadata has the key, in any currency. Customers without either are absent.
 */
export async function readCustomerContacts(
  warehouse: Warehouse,
  project: string,
  customers?: readonly string[],
): Promise<Map<string, CustomerContact>> {
  const rows = await warehouse.query<{ customer_id: string; name: string; email: string }>(
    `SELECT customer_id,
            argMaxIf(metadata['name'], (timestamp, received_at), metadata['name'] != '') AS name,
            argMaxIf(metadata['email'], (timestamp, received_at), metadata['email'] != '') AS email
     FROM revenue_records
     WHERE project_id = {project:String}
       AND (metadata['name'] != '' OR metadata['email'] != '')
       ${customers ? 'AND customer_id IN {customers:Array(String)}' : ''}
     GROUP BY customer_id`,
    { project, ...(customers ? { customers: [...customers] } : {}) },
  );
  return new Map(rows.map((r) => [r.customer_id, { name: r.name || null, email: r.email || null }]));
}

export function customerList(
  records: readonly MrrInput[],
  options: {
    currency: string;
    touches: ReadonlyMap<string, CustomerTouches>;
    contacts?: ReadonlyMap<string, CustomerContact>;
  },
): CustomerSummary[] {
  const fold = foldHistory(records, options.currency);
  return summaries(fold, fold.ranked, options);
}

/** How the customer list can be ordered: MRR now (the default), lifetime cash, first seen, or id. */
export const CUSTOMER_SORTS = ['mrr', 'cash', 'first_seen', 'customer_id'] as const;
export type CustomerSort = (typeof CUSTOMER_SORTS)[number];

export interface CustomerListOptions {
  project: string;
  /** The currency listed; with `table`, the currencies converted are `currencies`. */
  currency: string;
  /** Converts every currency of `currencies` with the operator's rates and adds each customer's up. */
  table?: RateTable | undefined;
  currencies?: readonly string[] | undefined;
  offset: number;
  limit: number;
  /** Only the customers whose id, name or email contains it, case aside. */
  search?: string | undefined;
  status?: CustomerStatus | undefined;
  sort?: CustomerSort | undefined;
  /** Default: descending for mrr and cash, ascending for first_seen and customer_id. */
  order?: 'asc' | 'desc' | undefined;
}

/**
 * One page (offset, limit) of customerList, those that `search` and `status` keep, in the order asked:
 * by MRR (then cash, then id) unless told otherwise. It reads the first touches of the page's customers
 * only, unless the order is first seen, which depends on every customer's first touch.
 */
export async function customerListPage(
  warehouse: Warehouse,
  records: readonly MrrInput[],
  options: CustomerListOptions,
): Promise<{ total: number; customers: CustomerSummary[] } & Partial<Converted>> {
  const converted = options.table ? convertedRanking(records, options.currencies ?? [], options.table) : null;
  const fold: Ranking = converted ?? foldHistory(records, options.currency);
  const needle = options.search?.trim().toLowerCase() ?? '';
  // Every customer's name and email when the search may match them; else the page's, read below.
  let contacts = needle === '' ? undefined : await readCustomerContacts(warehouse, options.project);
  const matches = (customer: string) => {
    const contact = contacts?.get(customer);
    return [customer, contact?.name ?? '', contact?.email ?? ''].some((text) =>
      text.toLowerCase().includes(needle),
    );
  };
  const statusOf = (c: HistoryFold['ranked'][number]): CustomerStatus => customerStatus(fold, c);
  const currency = options.table ? options.table.base : options.currency;
  let kept = fold.ranked.filter(
    (c) =>
      (needle === '' || matches(c.customer)) &&
      (options.status === undefined || statusOf(c) === options.status),
  );
  const sort = options.sort ?? 'mrr';
  const ascending = (options.order ?? (sort === 'mrr' || sort === 'cash' ? 'desc' : 'asc')) === 'asc';
  let touches: ReadonlyMap<string, CustomerTouches> | undefined;
  if (sort === 'first_seen' && kept.length > 0) {
    touches = await readCustomerTouches(
      warehouse,
      options.project,
      kept.map((c) => c.customer),
    );
    const seen = (c: (typeof kept)[number]) =>
      Math.min(c.state.first, touches?.get(c.customer)?.first?.start ?? c.state.first);
    kept = [...kept].sort((a, b) => seen(a) - seen(b) || (a.customer < b.customer ? -1 : 1));
  } else if (sort === 'cash') {
    kept = [...kept].sort((a, b) =>
      a.state.cash !== b.state.cash ? (a.state.cash > b.state.cash ? -1 : 1) : 0,
    );
  } else if (sort === 'customer_id') {
    kept = [...kept].sort((a, b) => (a.customer < b.customer ? -1 : a.customer > b.customer ? 1 : 0));
  }
  // mrr, cash: the list's ranking is descending; first_seen, customer_id: ascending.
  const natural = sort === 'mrr' || sort === 'cash' ? !ascending : ascending;
  if (!natural) kept = [...kept].reverse();
  const page = kept.slice(options.offset, options.offset + options.limit);
  if (!touches)
    touches =
      page.length === 0
        ? new Map<string, CustomerTouches>()
        : await readCustomerTouches(
            warehouse,
            options.project,
            page.map((c) => c.customer),
          );
  if (!contacts)
    contacts =
      page.length === 0
        ? new Map<string, CustomerContact>()
        : await readCustomerContacts(
            warehouse,
            options.project,
            page.map((c) => c.customer),
          );
  const customers = summaries(fold, page, { ...options, currency, touches, contacts });
  return { total: kept.length, customers, ...(converted ? converted.converted : {}) };
}

/**
 * What the list reads of a fold: the customers ranked, whether each ever paid, and (converted) whether each
 * pays now in any currency (a converted MRR is 0 where no rate is loaded).
 */
type Ranking = Pick<HistoryFold, 'ranked'> & {
  ledger: Pick<MrrLedger, 'everPaid'>;
  paying?: (customer: string) => boolean;
};

const customerStatus = (fold: Ranking, c: Ranked): CustomerStatus =>
  (fold.paying ? fold.paying(c.customer) : c.mrr > 0n)
    ? 'active'
    : fold.ledger.everPaid(c.customer)
      ? 'churned'
      : 'one_off';

/**
 * The customers of `currencies` with every amount converted to `table`'s base and added up per customer:
 * the MRR now at each currency's latest loaded rate (latestRate), each record's cash at its month's rate
 * (exchange-rates.ts). A currency without the rate an amount needs is left out of it and named.
 */
export function convertedRanking(
  records: readonly MrrInput[],
  currencies: readonly string[],
  table: RateTable,
): Ranking & { converted: Converted; purchased: ReadonlySet<string> } {
  const purchased = new Set<string>();
  const merged = new Map<string, { mrr: bigint; state: CustomerState; paid: boolean; paying: boolean }>();
  const used = new Map<string, RateUsed>();
  const missing = new Set<string>();
  const use = (rate: RateUsed | null, currency: string, micros: bigint): bigint => {
    if (!rate) {
      if (micros !== 0n) missing.add(currency);
      return 0n;
    }
    if (currency !== table.base) used.set(`${rate.currency}|${rate.period}`, rate);
    return convertMicros(micros, rate.rate);
  };
  for (const currency of currencies) {
    const fold = foldHistory(records, currency);
    for (const customer of fold.purchased) purchased.add(customer);
    const now = latestRate(table, currency);
    const monthly = new Map<string, RateUsed | null>();
    const rateOfMonth = (month: string) => {
      if (!monthly.has(month)) monthly.set(month, table.rateFor(currency, month));
      return monthly.get(month) ?? null;
    };
    const cash = new Map<string, bigint>();
    for (const r of records)
      if (r.currency === currency)
        cash.set(
          r.customer_id,
          (cash.get(r.customer_id) ?? 0n) + use(rateOfMonth(utcMonthOf(r.timestamp)), currency, r.amount),
        );
    for (const { customer, mrr, state } of fold.ranked) {
      const entry = merged.get(customer) ?? {
        mrr: 0n,
        state: { first: state.first, cash: 0n, records: 0 },
        paid: false,
        paying: false,
      };
      entry.mrr += use(now, currency, mrr);
      entry.state.cash += cash.get(customer) ?? 0n;
      entry.state.records += state.records;
      entry.state.first = Math.min(entry.state.first, state.first);
      entry.paid ||= fold.ledger.everPaid(customer);
      entry.paying ||= mrr > 0n;
      merged.set(customer, entry);
    }
  }
  const ranked = [...merged].map(([customer, { mrr, state }]) => ({ customer, mrr, state }));
  ranked.sort(byRank);
  return {
    ranked,
    ledger: { everPaid: (customer: string) => merged.get(customer)?.paid ?? false },
    paying: (customer: string) => merged.get(customer)?.paying ?? false,
    purchased,
    converted: {
      converted_to: table.base,
      rates: [...used.values()].sort((a, b) =>
        a.currency === b.currency ? (a.period < b.period ? -1 : 1) : a.currency < b.currency ? -1 : 1,
      ),
      missing_currencies: [...missing].sort(),
    },
  };
}

function summaries(
  fold: Ranking,
  ranked: HistoryFold['ranked'],
  options: {
    currency: string;
    touches: ReadonlyMap<string, CustomerTouches>;
    contacts?: ReadonlyMap<string, CustomerContact> | undefined;
  },
): CustomerSummary[] {
  return ranked.map(({ customer, mrr, state }) => {
    const touch = options.touches.get(customer)?.first ?? null;
    const contact = options.contacts?.get(customer);
    return {
      customer_id: customer,
      name: contact?.name ?? null,
      email: contact?.email ?? null,
      currency: options.currency,
      mrr: formatMicros(mrr),
      status: customerStatus(fold, { customer, mrr, state }),
      first_seen: new Date(Math.min(state.first, touch?.start ?? state.first)).toISOString(),
      first_touch: touch
        ? { channel: touch.channel, source: touch.source, utm_campaign: touch.utm_campaign }
        : null,
      cash_revenue: formatMicros(state.cash),
      records: state.records,
    };
  });
}

/** A point of a subscription's MRR history: after one of the customer's records. */
export interface MrrHistoryPoint {
  timestamp: string;
  transaction_id: string;
  currency: string;
  /** '' is the customer's default subscription (records without customer_subscription_id). */
  subscription: string;
  subscription_mrr: Money;
  customer_mrr: Money;
  movement: MovementKind | null;
  warning: string | null;
}

/** The customer's MRR after each of its records, per subscription (all its currencies). */
export function mrrHistory(records: readonly MrrInput[]): MrrHistoryPoint[] {
  const ledgers = new Map<string, MrrLedger>();
  const points: MrrHistoryPoint[] = [];
  for (const record of [...records].sort(byRecordTime)) {
    const ledger = ledgers.get(record.currency) ?? new MrrLedger(record.currency);
    ledgers.set(record.currency, ledger);
    const { movement, warning } = ledger.apply(record);
    points.push({
      timestamp: new Date(record.timestamp).toISOString(),
      transaction_id: record.transaction_id,
      currency: record.currency,
      subscription: record.customer_subscription_id,
      subscription_mrr: formatMicros(
        ledger.subscriptionMrr(record.customer_id, record.customer_subscription_id),
      ),
      customer_mrr: formatMicros(ledger.customerMrr(record.customer_id)),
      movement: movement?.kind ?? null,
      warning: warning?.message ?? null,
    });
  }
  return points;
}

/** One visit of the customer's visitors, with its pageviews and events in time order. */
export interface TimelineVisit {
  visitor_id: string;
  start: string;
  end: string;
  channel: string;
  source: string;
  utm_campaign: string;
  entry_path: string;
  pageviews: Array<{ timestamp: string; path: string }>;
  events: Array<{ timestamp: string; name: string }>;
}

/** At most this many visits on a customer's page (the newest are dropped past it). */
export const TIMELINE_VISITS = 500;

export async function readVisitTimeline(
  warehouse: Warehouse,
  project: string,
  customer: string,
): Promise<{ visits: TimelineVisit[]; identified_at: string | null }> {
  const [visits, identified] = await Promise.all([
    warehouse.query<{
      visitor_id: string;
      start_ms: number | string;
      end_ms: number | string;
      channel: string;
      source: string;
      utm_campaign: string;
      entry_path: string;
      pv_times: Array<number | string>;
      pv_paths: string[];
      ev_times: Array<number | string>;
      ev_names: string[];
    }>(
      `SELECT visitor_id, toUnixTimestamp64Milli(start) AS start_ms, toUnixTimestamp64Milli(end) AS end_ms,
              channel, source, utm_campaign, entry_path,
              arrayMap(t -> toUnixTimestamp64Milli(t), pageview_times) AS pv_times, pageview_paths AS pv_paths,
              arrayMap(t -> toUnixTimestamp64Milli(t), event_times) AS ev_times, event_names AS ev_names
       FROM visits FINAL
       WHERE project_id = {project:String}
         AND visitor_id IN (SELECT visitor_id FROM (${LINKED_VISITORS_SQL}) WHERE customer_id = {customer:String})
       ORDER BY start, visitor_id
       LIMIT {limit:UInt32}`,
      { project, customer, limit: TIMELINE_VISITS },
    ),
    warehouse.query<{ at: number | string | null }>(
      `SELECT if(count() = 0, NULL, toUnixTimestamp64Milli(min(timestamp))) AS at FROM identities FINAL
       WHERE project_id = {project:String} AND customer_id = {customer:String}`,
      { project, customer },
    ),
  ]);
  const iso = (ms: number | string) => new Date(Number(ms)).toISOString();
  const at = identified[0]?.at;
  return {
    identified_at: at === null || at === undefined ? null : iso(at),
    visits: visits.map((v) => ({
      visitor_id: v.visitor_id,
      start: iso(v.start_ms),
      end: iso(v.end_ms),
      channel: v.channel,
      source: v.source,
      utm_campaign: v.utm_campaign,
      entry_path: v.entry_path,
      pageviews: v.pv_times.map((t, i) => ({ timestamp: iso(t), path: v.pv_paths[i] ?? '' })),
      events: v.ev_times.map((t, i) => ({ timestamp: iso(t), name: v.ev_names[i] ?? '' })),
    })),
  };
}

/** Every revenue record of one customer as received, oldest first. */
export async function readCustomerRecords(
  warehouse: Warehouse,
  project: string,
  customer: string,
): Promise<StoredRevenueRecord[]> {
  const rows = await warehouse.query<StoredRecordRow>(
    `SELECT ${STORED_RECORD_COLUMNS}
     FROM revenue_records
     WHERE project_id = {project:String} AND customer_id = {customer:String}
     ORDER BY timestamp, received_at, transaction_id`,
    { project, customer },
  );
  return rows.map(storedRecord);
}
