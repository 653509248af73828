// The acquisition funnel (docs/revenue.md): per group of the visitors' first visit (channel, source or
// campaign), visitors whose first visit fell in the days from…to (in the project's time zone) → of them,
// identified (linked to a customer by identify or revenue records) → paying (a customer who ever had MRR,
// or made a purchase) → the MRR now and cash to date of their customers, and MRR per 1,000 visitors. A
// customer reached by visitors of several groups counts its money once, in the group of its earliest
// visitor of the cohort, so the groups' money adds up to the total.
import { divideRounded, formatMicros } from '@tally/contract';
import type { Warehouse } from '@tally/warehouse';
import { isDayText } from '../calendar.ts';
import { addDays, checkRange } from '../traffic/scope.ts';
import { convertedRanking, foldHistory } from './customers.ts';
import type { Converted, RateTable } from './exchange-rates.ts';
import type { MrrInput } from './ledger.ts';
import type { Money } from './money.ts';
import { ATTRIBUTION_DIMENSIONS, type AttributionDimension, RevenueQueryError } from './scope.ts';
import { LINKED_VISITORS_SQL, NO_VALUE } from './touches.ts';

export interface FunnelRow {
  key: string;
  visitors: number;
  identified: number;
  paying: number;
  /** identified / visitors, paying / visitors (fractions); null without visitors. */
  identified_rate: number | null;
  paying_rate: number | null;
  /** Paying customers whose MRR and cash count in this group. */
  paying_customers: number;
  mrr: Money;
  cash_revenue: Money;
  mrr_per_1000_visitors: Money | null;
}

export interface AcquisitionFunnel extends Partial<Converted> {
  from: string;
  to: string;
  by: AttributionDimension;
  currency: string;
  rows: FunnelRow[];
  total: Omit<FunnelRow, 'key'>;
}

export async function acquisitionFunnel(
  warehouse: Warehouse,
  records: readonly MrrInput[],
  options: {
    project: string;
    from: string;
    to: string;
    by: AttributionDimension;
    currency: string;
    /** The project's time zone (days are the project's, as every traffic figure's); default UTC. */
    timeZone?: string;
    /**
     * Converts the customers' money of every currency of `currencies` to `table`'s base as the converted
     * customer list does (customers.ts): MRR now at each currency's latest rate, cash at each payment's
     * month's rate; `currency` is then the base.
     */
    table?: RateTable | undefined;
    currencies?: readonly string[] | undefined;
  },
): Promise<AcquisitionFunnel> {
  if (!ATTRIBUTION_DIMENSIONS.includes(options.by)) throw new RevenueQueryError('unknown breakdown');
  if (!isDayText(options.from) || !isDayText(options.to))
    throw new RevenueQueryError('from and to must be days YYYY-MM-DD');
  checkRange(options.from, options.to);
  // `by` is one of ATTRIBUTION_DIMENSIONS (checked above): a column name, never request text.
  const rows = await warehouse.query<{
    visitor_id: string;
    key: string;
    first_ms: number | string;
    customers: string[];
  }>(
    `SELECT f.visitor_id AS visitor_id, f.key AS key, toUnixTimestamp64Milli(f.first_start) AS first_ms,
            l.customers AS customers
     FROM
     (
       SELECT visitor_id, argMin(${options.by}, start) AS key, min(start) AS first_start
       FROM visits FINAL WHERE project_id = {project:String}
       GROUP BY visitor_id
       HAVING first_start >= toDateTime64({start:String}, 3, {tz:String})
          AND first_start < toDateTime64({end:String}, 3, {tz:String})
     ) AS f
     LEFT JOIN
     (
       SELECT visitor_id, groupUniqArray(customer_id) AS customers FROM (${LINKED_VISITORS_SQL}) GROUP BY visitor_id
     ) AS l ON l.visitor_id = f.visitor_id
     SETTINGS join_use_nulls = 0`,
    {
      project: options.project,
      start: `${options.from} 00:00:00`,
      end: `${addDays(options.to, 1)} 00:00:00`,
      tz: options.timeZone ?? 'UTC',
    },
  );
  // Who paid, their MRR now and cash to date, in the currency (or converted from every currency).
  const money = funnelMoney(records, options);
  const paid = money.paid;
  // Each customer's money goes to the group of its earliest cohort visitor.
  const owner = new Map<string, { key: string; first: number; visitor: string }>();
  for (const row of rows) {
    const first = Number(row.first_ms);
    for (const c of row.customers ?? []) {
      const held = owner.get(c);
      if (!held || first < held.first || (first === held.first && row.visitor_id < held.visitor))
        owner.set(c, { key: row.key || NO_VALUE, first, visitor: row.visitor_id });
    }
  }
  interface Sums {
    visitors: number;
    identified: number;
    paying: number;
    customers: number;
    mrr: bigint;
    cash: bigint;
  }
  const empty = (): Sums => ({ visitors: 0, identified: 0, paying: 0, customers: 0, mrr: 0n, cash: 0n });
  const groups = new Map<string, Sums>();
  const total = empty();
  const group = (key: string) => {
    const found = groups.get(key) ?? empty();
    groups.set(key, found);
    return found;
  };
  for (const row of rows) {
    const g = group(row.key || NO_VALUE);
    const customers = row.customers ?? [];
    const identified = customers.length > 0 ? 1 : 0;
    const paying = customers.some(paid) ? 1 : 0;
    for (const s of [g, total]) {
      s.visitors += 1;
      s.identified += identified;
      s.paying += paying;
    }
  }
  for (const [customer, { key }] of owner) {
    if (!paid(customer)) continue;
    const g = group(key);
    for (const s of [g, total]) {
      s.customers += 1;
      s.mrr += money.mrr(customer);
      s.cash += money.cash(customer);
    }
  }
  const shape = (s: Sums): Omit<FunnelRow, 'key'> => ({
    visitors: s.visitors,
    identified: s.identified,
    paying: s.paying,
    identified_rate: s.visitors === 0 ? null : s.identified / s.visitors,
    paying_rate: s.visitors === 0 ? null : s.paying / s.visitors,
    paying_customers: s.customers,
    mrr: formatMicros(s.mrr),
    cash_revenue: formatMicros(s.cash),
    mrr_per_1000_visitors:
      s.visitors === 0 ? null : formatMicros(divideRounded(s.mrr * 1000n, BigInt(s.visitors))),
  });
  return {
    from: options.from,
    to: options.to,
    by: options.by,
    currency: options.table ? options.table.base : options.currency,
    rows: [...groups.entries()]
      .sort((a, b) => b[1].visitors - a[1].visitors || (a[0] < b[0] ? -1 : 1))
      .map(([key, s]) => ({ key, ...shape(s) })),
    total: shape(total),
    ...money.converted,
  };
}

/** Each customer's money as the funnel counts it: whether it ever paid, its MRR now, its cash to date. */
function funnelMoney(
  records: readonly MrrInput[],
  options: { currency: string; table?: RateTable | undefined; currencies?: readonly string[] | undefined },
): {
  paid: (customer: string) => boolean;
  mrr: (customer: string) => bigint;
  cash: (customer: string) => bigint;
  converted?: Converted;
} {
  if (options.table) {
    const ranking = convertedRanking(records, options.currencies ?? [], options.table);
    const byCustomer = new Map(ranking.ranked.map((c) => [c.customer, c]));
    return {
      paid: (c) => ranking.ledger.everPaid(c) || ranking.purchased.has(c),
      mrr: (c) => byCustomer.get(c)?.mrr ?? 0n,
      cash: (c) => byCustomer.get(c)?.state.cash ?? 0n,
      converted: ranking.converted,
    };
  }
  const { ledger, states, purchased } = foldHistory(records, options.currency);
  return {
    paid: (c) => ledger.everPaid(c) || purchased.has(c),
    mrr: (c) => ledger.customerMrr(c),
    cash: (c) => states.get(c)?.cash ?? 0n,
  };
}
