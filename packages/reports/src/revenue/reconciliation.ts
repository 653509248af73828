// The reconciliation of one month and currency (docs/revenue.md): cash revenue split by kind of record, the
// MRR bridge (start + new + expansion + reactivation − contraction − churn = end) and the month's data
// warnings with their records. The bridge's end is the fold's MRR at the month's end and its movements
// are summed per customer, so a bug in either shows as a bridge that does not close; the movements are
// also compared with the mrr_movements table the revenue consumer keeps (a difference means the table
// lags or is wrong). Every discrepancy is listed in `errors`, never hidden.
import { formatMicros, toMicros } from '@tally/contract';
import type { Warehouse } from '@tally/warehouse';
import { monthStart } from '../calendar.ts';
import { MOVEMENT_KINDS, type MovementKind, type MrrInput } from './ledger.ts';
import type { Money } from './money.ts';
import { foldPeriod, movementSum } from './period.ts';

/** Cash revenue by kind of record: recurring (subscription, renewal, upgrade, downgrade), one-off
 * (purchase), refunds, churn amounts, and records without an event_type. */
export const CASH_KINDS = ['recurring', 'one_off', 'refunds', 'churn', 'unlabelled'] as const;
export type CashKind = (typeof CASH_KINDS)[number];

export function cashKindOf(eventType: string): CashKind {
  switch (eventType) {
    case 'subscription':
    case 'renewal':
    case 'upgrade':
    case 'downgrade':
      return 'recurring';
    case 'purchase':
      return 'one_off';
    case 'refund':
      return 'refunds';
    case 'churn':
      return 'churn';
    default:
      return 'unlabelled';
  }
}

export interface ReconciliationWarning {
  message: string;
  customer_id: string;
  transaction_id: string;
  /** The record ids the warning is about. */
  record_ids: string[];
  timestamp: string;
}

export interface Reconciliation {
  month: string;
  currency: string;
  cash: Record<CashKind, Money> & { total: Money; records: number };
  bridge: {
    mrr_start: Money;
    new: Money;
    expansion: Money;
    reactivation: Money;
    contraction: Money;
    churn: Money;
    /** start + new + expansion + reactivation − contraction − churn. */
    computed_end: Money;
    mrr_end: Money;
    closes: boolean;
  };
  /** The month's movements as the mrr_movements table holds them (null when not read). */
  stored_movements: Record<MovementKind, Money> | null;
  warnings: ReconciliationWarning[];
  /** What does not add up: a bridge that does not close, stored movements that differ. */
  errors: string[];
}

export type MovementSums = Record<MovementKind, bigint>;

export function reconcile(
  records: readonly MrrInput[],
  options: { month: string; currency: string; stored?: MovementSums | null },
): Reconciliation {
  const fold = foldPeriod(records, { from: options.month, to: options.month, currency: options.currency });
  const cash: Record<CashKind, bigint> = {
    recurring: 0n,
    one_off: 0n,
    refunds: 0n,
    churn: 0n,
    unlabelled: 0n,
  };
  const movements: MovementSums = { new: 0n, expansion: 0n, reactivation: 0n, contraction: 0n, churn: 0n };
  let total = 0n;
  let count = 0;
  for (const c of fold.customers.values()) {
    for (const r of c.records) {
      cash[cashKindOf(r.event_type)] += r.amount;
      total += r.amount;
      count += 1;
    }
    for (const kind of MOVEMENT_KINDS) movements[kind] += movementSum(c, kind);
  }
  const computedEnd =
    fold.mrr_start +
    movements.new +
    movements.expansion +
    movements.reactivation -
    movements.contraction -
    movements.churn;
  const errors: string[] = [];
  const closes = computedEnd === fold.mrr_end;
  if (!closes) {
    errors.push(
      `the MRR bridge does not close: start and movements give ${formatMicros(computedEnd)}, MRR at the end is ${formatMicros(fold.mrr_end)}`,
    );
  }
  const stored = options.stored ?? null;
  if (stored) {
    for (const kind of MOVEMENT_KINDS) {
      if (stored[kind] !== movements[kind]) {
        errors.push(
          `${kind}: the mrr_movements table holds ${formatMicros(stored[kind])}, the records give ${formatMicros(movements[kind])}`,
        );
      }
    }
  }
  const money = (sums: Record<string, bigint>) =>
    Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, formatMicros(v)]));
  return {
    month: options.month,
    currency: options.currency,
    cash: { ...(money(cash) as Record<CashKind, Money>), total: formatMicros(total), records: count },
    bridge: {
      mrr_start: formatMicros(fold.mrr_start),
      new: formatMicros(movements.new),
      expansion: formatMicros(movements.expansion),
      reactivation: formatMicros(movements.reactivation),
      contraction: formatMicros(movements.contraction),
      churn: formatMicros(movements.churn),
      computed_end: formatMicros(computedEnd),
      mrr_end: formatMicros(fold.mrr_end),
      closes,
    },
    stored_movements: stored ? (money(stored) as Record<MovementKind, Money>) : null,
    warnings: fold.warnings.map((w) => ({
      message: w.message,
      customer_id: w.customer_id,
      transaction_id: w.transaction_id,
      record_ids: w.record_id ? [w.record_id] : [],
      timestamp: new Date(w.timestamp).toISOString(),
    })),
    errors,
  };
}

/** The month's movements of one currency as the mrr_movements table holds them. */
export async function readStoredMovements(
  warehouse: Warehouse,
  options: { project: string; month: string; currency: string },
): Promise<MovementSums> {
  const rows = await warehouse.query<{ movement: string; amount: string }>(
    `SELECT movement, toString(sum(amount)) AS amount FROM mrr_movements_current
     WHERE project_id = {project:String} AND currency = {currency:String}
       AND timestamp >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
       AND timestamp < fromUnixTimestamp64Milli({end:Int64}, 'UTC')
     GROUP BY movement`,
    {
      project: options.project,
      currency: options.currency,
      start: monthStart(options.month),
      end: monthStart(options.month, 1),
    },
  );
  const sums: MovementSums = { new: 0n, expansion: 0n, reactivation: 0n, contraction: 0n, churn: 0n };
  for (const row of rows) if (row.movement in sums) sums[row.movement as MovementKind] = toMicros(row.amount);
  return sums;
}
