// MRR by acquisition (dashboard.md, "Linking revenue to acquisition"). A customer's visitors are those its
// identify records link to it (visitor_customers: each visitor's latest customer) plus the
// visitor_fingerprint of its revenue records where that visitor has visits. Its first touch is the
// earliest visit of any of them; its last touch before payment the last of them that started before the
// customer's first revenue record. Each customer falls in exactly one group of a breakdown
// ('(unattributed)' without a linked visit), so the groups' figures, sums of their customers' figures
// from one fold (period.ts), add up exactly to the unbroken totals.
import { formatMicros } from '@tally/contract';
import type { QueryParams, Warehouse } from '@tally/warehouse';
import { kept } from './kept.ts';
import type { MovementKind, MrrInput } from './ledger.ts';
import type { Money } from './monthly.ts';
import { foldPeriod, type PeriodFold } from './period.ts';
import type { AttributionDimension, Touch } from './scope.ts';

export const UNATTRIBUTED = '(unattributed)';
/** The group of a touch whose dimension is empty (a visit without a campaign). */
export const NO_VALUE = '(none)';

/** One visit as a touch: its acquisition attributes (those of its entry pageview). */
export interface Touchpoint {
  visitor_id: string;
  /** When the visit started (ms). */
  start: number;
  channel: string;
  source: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  entry_path: string;
}

export interface CustomerTouches {
  first: Touchpoint;
  /** null when no linked visit started before the customer's first revenue record. */
  last: Touchpoint | null;
}

type TouchTuple = [string, string | number, string, string, string, string, string, string];

const touchOf = (t: TouchTuple): Touchpoint => ({
  visitor_id: t[0],
  start: Number(t[1]),
  channel: t[2],
  source: t[3],
  utm_source: t[4],
  utm_medium: t[5],
  utm_campaign: t[6],
  entry_path: t[7],
});

/** The visitors linked to each customer of a project (identify records and revenue records). */
export const LINKED_VISITORS_SQL = `
  SELECT customer_id, visitor_id FROM visitor_customers
  WHERE project_id = {project:String} AND customer_id != ''
  UNION DISTINCT
  SELECT customer_id, visitor_id FROM revenue_records
  WHERE project_id = {project:String} AND visitor_id != ''`;

const TOUCH_TUPLE = `tuple(v.visitor_id, toUnixTimestamp64Milli(v.start), v.channel, v.source, v.utm_source,
  v.utm_medium, v.utm_campaign, v.entry_path)`;

/** First and last touch of every customer of `project` that has a linked visit. */
export async function readCustomerTouches(
  warehouse: Warehouse,
  project: string,
  customers?: readonly string[],
): Promise<Map<string, CustomerTouches>> {
  const only = customers ? 'AND customer_id IN {customers:Array(String)}' : '';
  const params: QueryParams = { project };
  let linked = `SELECT * FROM (${LINKED_VISITORS_SQL}) WHERE 1 ${only}`;
  let visits = 'visits FINAL WHERE project_id = {project:String}';
  let revenue = 'revenue_records';
  if (customers) {
    // For a few customers (the touches cache's refresh) the same rows, read from less. Their linked
    // visitors first (the same SQL), then only those visitors' visits and only the revenue of transactions
    // with a stored row of these customers (every copy of such a transaction, so FINAL keeps the same
    // one, and every kept row of theirs is among them). PREWHERE on key columns (visitor_id;
    // transaction_id) leaves the other rows out before FINAL's merge, which is exact because it keeps or
    // drops every row of a key together.
    params.customers = [...customers];
    revenue = `(SELECT * FROM revenue FINAL
      PREWHERE project_id = {project:String} AND transaction_id IN
        (SELECT transaction_id FROM revenue WHERE project_id = {project:String} ${only}))`;
    // visitor_customers (schemas/clickhouse/002_identities.sql) for these customers only: a visitor whose
    // latest identify names one of them has a raw identities row naming it, so the view's own argMax over
    // just those visitors' rows (PREWHERE on the key column visitor_id) gives the same pairs, without
    // grouping every identified visitor of the project.
    const pairs = await warehouse.query<{ customer_id: string; visitor_id: string }>(
      `SELECT customer_id, visitor_id FROM
       (
         SELECT visitor_id, argMax(customer_id, (timestamp, received_at, id)) AS customer_id
         FROM identities FINAL
         PREWHERE project_id = {project:String} AND visitor_id IN
           (SELECT visitor_id FROM identities
            WHERE project_id = {project:String} AND visitor_id != '' ${only})
         GROUP BY visitor_id
       )
       WHERE customer_id != '' ${only}
       UNION DISTINCT
       SELECT customer_id, visitor_id FROM ${revenue}
       WHERE project_id = {project:String} AND visitor_id != '' ${only}`,
      params,
    );
    if (pairs.length === 0) return new Map();
    params.linked_customers = pairs.map((p) => p.customer_id);
    params.linked_visitors = pairs.map((p) => p.visitor_id);
    linked = `SELECT p.1 AS customer_id, p.2 AS visitor_id
      FROM (SELECT arrayJoin(arrayZip({linked_customers:Array(String)}, {linked_visitors:Array(String)})) AS p)`;
    visits = `visits FINAL
      PREWHERE project_id = {project:String} AND visitor_id IN {linked_visitors:Array(String)}`;
  }
  const rows = await warehouse.query<{
    customer: string;
    first_touch: TouchTuple;
    last_touch: TouchTuple;
    before_payment: number | string;
  }>(
    `SELECT l.customer_id AS customer,
            argMin(${TOUCH_TUPLE}, tuple(v.start, v.visitor_id)) AS first_touch,
            argMaxIf(${TOUCH_TUPLE}, tuple(v.start, v.visitor_id), v.start < f.first_revenue) AS last_touch,
            countIf(v.start < f.first_revenue) AS before_payment
     FROM
     (
       SELECT visitor_id, start, channel, source, utm_source, utm_medium, utm_campaign, entry_path
       FROM ${visits}
     ) AS v
     INNER JOIN (${linked}) AS l ON l.visitor_id = v.visitor_id
     LEFT JOIN
     (
       SELECT customer_id, min(timestamp) AS first_revenue FROM ${revenue}
       WHERE project_id = {project:String} ${only} GROUP BY customer_id
     ) AS f ON f.customer_id = l.customer_id
     GROUP BY l.customer_id`,
    params,
  );
  const touches = new Map<string, CustomerTouches>();
  for (const row of rows) {
    touches.set(row.customer, {
      first: touchOf(row.first_touch),
      last: Number(row.before_payment) > 0 ? touchOf(row.last_touch) : null,
    });
  }
  return touches;
}

/** The group of a customer in a breakdown by `by` of its `touch`. */
export function attributionKey(
  touches: CustomerTouches | undefined,
  by: AttributionDimension,
  touch: Touch,
): string {
  const point = touch === 'first' ? touches?.first : touches?.last;
  if (!point) return UNATTRIBUTED;
  return point[by] || NO_VALUE;
}

/** One group's figures over a period (money as exact decimal text). */
export interface AttributionRow {
  key: string;
  /** Customers of the group with a revenue record (of the currency) up to the period's end. */
  customers: number;
  /** Customers of the group with MRR above zero at the period's end. */
  paying_customers: number;
  new: Money;
  expansion: Money;
  reactivation: Money;
  contraction: Money;
  churn: Money;
  mrr_end: Money;
  cash_revenue: Money;
}

export interface Attribution {
  from: string;
  to: string;
  currency: string;
  by: AttributionDimension;
  touch: Touch;
  rows: AttributionRow[];
  /** The unbroken figures: each column of `rows` adds up to it exactly. */
  total: Omit<AttributionRow, 'key'>;
}

/** A group's sums: customers, paying customers, and the money figures in micro-units (FIGURES' order). */
interface Sums<T extends number | bigint> {
  customers: number;
  paying: number;
  money: T[];
}

/** The money figures of a row, in the order of Sums.money; movements first, by MOVEMENT_KINDS' index. */
const FIGURES = [
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'mrr_end',
  'cash_revenue',
] as const;
const FIGURE_OF_KIND: Record<MovementKind, number> = {
  new: 0,
  expansion: 1,
  reactivation: 2,
  contraction: 3,
  churn: 4,
};

const shape = (s: Sums<number | bigint>): Omit<AttributionRow, 'key'> => {
  const money = s.money.map((v) => formatMicros(BigInt(v)));
  const row: Record<string, string | number> = { customers: s.customers, paying_customers: s.paying };
  FIGURES.forEach((figure, i) => {
    row[figure] = money[i] as string;
  });
  return row as unknown as Omit<AttributionRow, 'key'>;
};

/**
 * The groups' and the total's sums, as Numbers. Exact when the returned `size` (the sum of the absolute
 * values of everything added) is below 2^53: every partial sum of any group is then an integer of at most
 * that size, which a double holds exactly.
 */
function sumNumbers(fold: PeriodFold, keys: readonly string[]) {
  const empty = (): Sums<number> => ({ customers: 0, paying: 0, money: [0, 0, 0, 0, 0, 0, 0] });
  const groups = new Map<string, Sums<number>>();
  const total = empty();
  const figures = new Float64Array(7);
  let size = 0;
  let i = 0;
  for (const c of fold.customers.values()) {
    const key = keys[i++] as string;
    let group = groups.get(key);
    if (!group) {
      group = empty();
      groups.set(key, group);
    }
    figures.fill(0);
    for (const m of c.movements) (figures[FIGURE_OF_KIND[m.kind]] as number) += Number(m.amount);
    figures[5] = Number(c.mrr_end);
    figures[6] = Number(c.cash);
    const paying = c.mrr_end > 0n ? 1 : 0;
    group.customers += 1;
    group.paying += paying;
    total.customers += 1;
    total.paying += paying;
    for (let f = 0; f < 7; f++) {
      const v = figures[f] as number;
      (group.money[f] as number) += v;
      (total.money[f] as number) += v;
      size += Math.abs(v);
    }
  }
  return { groups, total, size };
}

/** The same sums as BigInt: exact at any size. */
function sumBigInts(fold: PeriodFold, keys: readonly string[]) {
  const empty = (): Sums<bigint> => ({ customers: 0, paying: 0, money: [0n, 0n, 0n, 0n, 0n, 0n, 0n] });
  const groups = new Map<string, Sums<bigint>>();
  const total = empty();
  let i = 0;
  for (const c of fold.customers.values()) {
    const key = keys[i++] as string;
    let group = groups.get(key);
    if (!group) {
      group = empty();
      groups.set(key, group);
    }
    for (const sums of [group, total]) {
      sums.customers += 1;
      if (c.mrr_end > 0n) sums.paying += 1;
      for (const m of c.movements) (sums.money[FIGURE_OF_KIND[m.kind]] as bigint) += m.amount;
      (sums.money[5] as bigint) += c.mrr_end;
      (sums.money[6] as bigint) += c.cash;
    }
  }
  return { groups, total };
}

/**
 * Movements, MRR at the end, paying customers and cash of months from…to, per group of the customers' touch.
 * The answer is shared (kept per fold and touches): callers must not change it.
 */
export function revenueAttribution(
  records: readonly MrrInput[],
  options: {
    from: string;
    to: string;
    currency: string;
    by: AttributionDimension;
    touch: Touch;
    touches: ReadonlyMap<string, CustomerTouches>;
  },
): Attribution {
  const fold = foldPeriod(records, options);
  // Kept per fold (shared while the cached history is unchanged) and touches map (likewise): a page asks
  // for the same grouping again and again.
  const answers = kept(
    kept(attributions, fold, () => new WeakMap()),
    options.touches,
    () => new Map(),
  );
  const key = `${options.by}|${options.touch}`;
  const found = answers.get(key);
  if (found) return found;
  const { rows, total } = groupFold(fold, (customer) =>
    attributionKey(options.touches.get(customer), options.by, options.touch),
  );
  const attribution: Attribution = {
    from: options.from,
    to: options.to,
    currency: options.currency,
    by: options.by,
    touch: options.touch,
    rows,
    total,
  };
  answers.set(key, attribution);
  return attribution;
}

const attributions = new WeakMap<PeriodFold, WeakMap<object, Map<string, Attribution>>>();

/**
 * The fold's customers in groups (`keyOf` names each customer's one group): each group's figures, largest
 * MRR first, and the unbroken total they add up to. Attribution and the revenue breakdown share it.
 * Summed as Numbers when that is exact (sumNumbers; several times faster than BigInt over 50,000
 * customers), else as BigInt.
 */
export function groupFold(
  fold: PeriodFold,
  keyOf: (customer: string) => string,
): { rows: AttributionRow[]; total: Omit<AttributionRow, 'key'> } {
  const keys = Array.from(fold.customers.keys(), keyOf);
  const numbers = sumNumbers(fold, keys);
  const summed: { groups: Map<string, Sums<number | bigint>>; total: Sums<number | bigint> } =
    numbers.size < Number.MAX_SAFE_INTEGER ? numbers : sumBigInts(fold, keys);
  const rows = [...summed.groups.entries()]
    .map(([key, sums]) => ({
      mrr: BigInt(sums.money[5] as number | bigint),
      cash: BigInt(sums.money[6] as number | bigint),
      row: { key, ...shape(sums) },
    }))
    .sort(
      (a, b) =>
        (a.mrr < b.mrr ? 1 : a.mrr > b.mrr ? -1 : 0) ||
        (a.cash < b.cash ? 1 : a.cash > b.cash ? -1 : 0) ||
        (a.row.key < b.row.key ? -1 : a.row.key > b.row.key ? 1 : 0),
    )
    .map((r) => r.row);
  return { rows, total: shape(summed.total) };
}
