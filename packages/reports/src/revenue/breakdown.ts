// Revenue by a customer attribute (plan, interval, coupon, source, campaign, payment_processor or any
// metadata.<key>): the period's figures per group, from the same per-customer fold as the MRR report
// (period.ts), grouped as attribution groups customers (groupFold). A customer's group is its
// attribute as of the period's end (filters.ts), so each customer is in exactly one group and the
// rows add up exactly to the total, which is the MRR report's over the same months. Grouping is by
// customer, not subscription: MRR movements are a customer's (ledger.ts), and a customer with two
// subscriptions on two plans is in the group of the plan on its latest record.

import { convertedGroupFold } from './converted-groups.ts';
import type { Converted, RateTable } from './exchange-rates.ts';
import { checkRevenueDimension, NO_ATTRIBUTE } from './filters.ts';
import type { MrrInput } from './ledger.ts';
import { type AttributionRow, groupFold } from './money.ts';
import { foldPeriod } from './period.ts';

export interface RevenueBreakdown {
  from: string;
  to: string;
  currency: string;
  by: string;
  rows: AttributionRow[];
  /** The unbroken figures: each column of `rows` adds up to it exactly. */
  total: Omit<AttributionRow, 'key'>;
}

/**
 * Movements, MRR at the end, paying customers and cash of months from…to in `currency`, per value of
 * `by`; `values` is each customer's value (readCustomerAttributes up to the period's end).
 */
export function revenueBreakdown(
  records: readonly MrrInput[],
  options: { from: string; to: string; currency: string; by: string; values: ReadonlyMap<string, string> },
): RevenueBreakdown {
  checkRevenueDimension(options.by);
  const { rows, total } = groupFold(
    foldPeriod(records, options),
    (customer) => options.values.get(customer) ?? NO_ATTRIBUTE,
  );
  return { from: options.from, to: options.to, currency: options.currency, by: options.by, rows, total };
}

/** The breakdown with every currency of `currencies` converted to `table`'s base (converted-groups.ts). */
export function convertedRevenueBreakdown(
  records: readonly MrrInput[],
  options: {
    from: string;
    to: string;
    currencies: readonly string[];
    by: string;
    values: ReadonlyMap<string, string>;
    table: RateTable;
  },
): RevenueBreakdown & Converted {
  checkRevenueDimension(options.by);
  const folds = options.currencies.map((currency) => foldPeriod(records, { ...options, currency }));
  const converted = convertedGroupFold(
    folds,
    (customer) => options.values.get(customer) ?? NO_ATTRIBUTE,
    options.table,
  );
  return { from: options.from, to: options.to, currency: options.table.base, by: options.by, ...converted };
}
