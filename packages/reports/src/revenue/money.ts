// Exact money in the revenue reports: amounts are BigInt micro-units while they are folded (the
// warehouse's Decimal scale, 6) and exact decimal text when reported (Money), which no JSON number could
// hold for every total; a rate is a ratio, not money. groupFold sums a fold's customers per group exactly,
// for attribution and the breakdown.
import { formatMicros } from '@tally/contract';
import type { MovementKind } from './ledger.ts';
import type { PeriodFold } from './period.ts';

/** An amount of money as exact decimal text in the currency's major unit: "49", "-12.5", "0.000001". */
export type Money = string;

/**
 * numerator / denominator as a fraction, null when the denominator is 0. A rate is a ratio, not money: the
 * nearest double is its exact form (each BigInt is rounded once to a double first).
 */
export function rate(numerator: bigint, denominator: bigint): number | null {
  return denominator === 0n ? null : Number(numerator) / Number(denominator);
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
