// Attribution and the revenue breakdown converted with the operator's rates (`convert_to`): the period's
// fold of each currency, each customer's figures converted and added up per group. Every amount is converted
// at the rate of its own month: a movement and a payment at the month they happened in, the MRR at the end
// at the rate of the period's last month (exchange-rates.ts: a month's rate, else its closing day's). A
// currency with no rate for a month is left out of that month and named in `missing_currencies`. The
// customers of every currency are counted (one paying in two currencies counts in both). Converted
// figures are rounded each on its own (to the micro-unit), then added exactly, so each column still adds
// up to the total.
import { formatMicros } from '@tally/contract';
import { utcMonthOf } from '../calendar.ts';
import { type Converted, convertMicros, type RateTable, type RateUsed } from './exchange-rates.ts';
import type { MovementKind } from './ledger.ts';
import type { AttributionRow } from './money.ts';
import type { PeriodFold } from './period.ts';

interface GroupSums {
  customers: number;
  paying: number;
  money: Record<MovementKind | 'mrr_end' | 'cash_revenue', bigint>;
}

const emptySums = (): GroupSums => ({
  customers: 0,
  paying: 0,
  money: {
    new: 0n,
    expansion: 0n,
    reactivation: 0n,
    contraction: 0n,
    churn: 0n,
    mrr_end: 0n,
    cash_revenue: 0n,
  },
});

const shape = (s: GroupSums): Omit<AttributionRow, 'key'> => ({
  customers: s.customers,
  paying_customers: s.paying,
  new: formatMicros(s.money.new),
  expansion: formatMicros(s.money.expansion),
  reactivation: formatMicros(s.money.reactivation),
  contraction: formatMicros(s.money.contraction),
  churn: formatMicros(s.money.churn),
  mrr_end: formatMicros(s.money.mrr_end),
  cash_revenue: formatMicros(s.money.cash_revenue),
});

export type ConvertedGroups = Converted & {
  rows: AttributionRow[];
  total: Omit<AttributionRow, 'key'>;
};

/**
 * The customers of `folds` (one fold of the same period per currency) in groups (`keyOf`), every amount
 * converted to `table`'s base: rows largest MRR first (then cash, then key), as groupFold orders them.
 */
export function convertedGroupFold(
  folds: readonly PeriodFold[],
  keyOf: (customer: string) => string,
  table: RateTable,
): ConvertedGroups {
  const groups = new Map<string, GroupSums>();
  const total = emptySums();
  const used = new Map<string, RateUsed>();
  const missing = new Set<string>();
  for (const fold of folds) {
    // Each month's rate of this currency, looked up once (null: none loaded).
    const rates = new Map<string, string | null>();
    // An amount at its month's rate; a non-zero amount without one names its currency as missing.
    const convert = (micros: bigint, month: string): bigint => {
      let rate = rates.get(month);
      if (rate === undefined) {
        const found = table.rateFor(fold.currency, month);
        if (found && fold.currency !== table.base) used.set(`${found.currency}|${found.period}`, found);
        rate = found?.rate ?? null;
        rates.set(month, rate);
      }
      if (rate === null) {
        if (micros !== 0n) missing.add(fold.currency);
        return 0n;
      }
      return convertMicros(micros, rate);
    };
    for (const c of fold.customers.values()) {
      const key = keyOf(c.customer_id);
      let group = groups.get(key);
      if (!group) {
        group = emptySums();
        groups.set(key, group);
      }
      const money = emptySums().money;
      for (const m of c.movements) money[m.kind] += convert(m.amount, utcMonthOf(m.timestamp));
      for (const r of c.records) money.cash_revenue += convert(r.amount, utcMonthOf(r.timestamp));
      money.mrr_end = convert(c.mrr_end, fold.to);
      const paying = c.mrr_end > 0n ? 1 : 0;
      for (const sums of [group, total]) {
        sums.customers += 1;
        sums.paying += paying;
        for (const figure of Object.keys(money) as Array<keyof GroupSums['money']>)
          sums.money[figure] += money[figure];
      }
    }
  }
  const rows = [...groups.entries()]
    .sort(
      ([ka, a], [kb, b]) =>
        (a.money.mrr_end < b.money.mrr_end ? 1 : a.money.mrr_end > b.money.mrr_end ? -1 : 0) ||
        (a.money.cash_revenue < b.money.cash_revenue
          ? 1
          : a.money.cash_revenue > b.money.cash_revenue
            ? -1
            : 0) ||
        (ka < kb ? -1 : ka > kb ? 1 : 0),
    )
    .map(([key, sums]) => ({ key, ...shape(sums) }));
  return {
    rows,
    total: shape(total),
    converted_to: table.base,
    rates: [...used.values()].sort((a, b) =>
      a.currency === b.currency ? (a.period < b.period ? -1 : 1) : a.currency < b.currency ? -1 : 1,
    ),
    missing_currencies: [...missing].sort(),
  };
}
