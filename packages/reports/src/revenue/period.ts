// One period (months from…to, UTC) of one currency, per customer: the MRR fold of ledger.ts run
// over the records in the order of their own timestamps, with each movement, each record's cash and each
// customer's MRR at both ends of the period kept against the customer it belongs to. Every revenue view
// that splits a figure (attribution, drill-down, reconciliation, customers) reads these per-customer
// figures, so a breakdown's rows are sums of the same customers' numbers as the unbroken total and add up
// to it exactly (BigInt micro-units, no rounding anywhere).

import { monthStart } from '../calendar.ts';
import { type HistoryChange, memoOnFrozen } from './history.ts';
import {
  byRecordTime,
  type DataWarning,
  type MovementKind,
  type MrrInput,
  MrrLedger,
  type MrrMovement,
} from './ledger.ts';

/** One customer's figures of the period, micro-units. */
export interface CustomerPeriod {
  customer_id: string;
  mrr_start: bigint;
  mrr_end: bigint;
  movements: MrrMovement[];
  /** The customer's records of the period (cash revenue is the sum of their amounts). */
  records: MrrInput[];
  cash: bigint;
  /** Whether the customer has any record (of this currency) up to the period's end. */
  known: boolean;
}

export interface PeriodFold {
  currency: string;
  from: string;
  to: string;
  /** Every customer with a record of this currency up to the period's end. */
  customers: Map<string, CustomerPeriod>;
  mrr_start: bigint;
  mrr_end: bigint;
  warnings: Array<DataWarning & { record_id: string | null }>;
}

const folds = new WeakMap<readonly MrrInput[], Map<string, PeriodFold>>();
/** Each customer's first record in the fold's order (the order of `customers`), and each warning's record. */
const firstRecords = new WeakMap<CustomerPeriod, MrrInput>();
const warningRecords = new WeakMap<object, MrrInput>();

/**
 * Folds `records` (any order, any currencies; only `currency`'s are read) over months from…to. The fold of
 * a frozen array (the cached history) is computed once per period and shared: callers only read it.
 */
export function foldPeriod(
  records: readonly MrrInput[],
  options: { from: string; to: string; currency: string },
): PeriodFold {
  return memoOnFrozen(
    folds,
    records,
    `${options.from}|${options.to}|${options.currency}`,
    () => fold(records, options),
    (previous, change) => refold(previous, change, options),
  );
}

/**
 * The fold of a refreshed history from the fold of the one before it: the changed customers folded again
 * alone (a customer's figures depend on its own records only), everyone else's figures kept, the customers
 * and the warnings in the order a whole fold gives them (by their first record, by their record), and
 * the totals corrected by the changed customers' figures before and now (exact: BigInt).
 */
function refold(
  previous: PeriodFold,
  change: HistoryChange,
  options: { from: string; to: string; currency: string },
): PeriodFold | undefined {
  const changed = fold(change.after, options);
  const incoming = [...changed.customers.values()];
  const customers = new Map<string, CustomerPeriod>();
  let next = 0;
  for (const c of previous.customers.values()) {
    if (change.customers.has(c.customer_id)) continue;
    if (next === incoming.length) {
      // Every changed customer placed: the rest keep their order.
      customers.set(c.customer_id, c);
      continue;
    }
    const first = firstRecords.get(c);
    if (!first) return undefined;
    for (; next < incoming.length; next++) {
      const other = incoming[next] as CustomerPeriod;
      if (byRecordTime(firstRecords.get(other) as MrrInput, first) > 0) break;
      customers.set(other.customer_id, other);
    }
    customers.set(c.customer_id, c);
  }
  for (; next < incoming.length; next++) {
    const other = incoming[next] as CustomerPeriod;
    customers.set(other.customer_id, other);
  }
  // The totals: the earlier ones, less the changed customers' figures before, plus theirs now.
  let mrrStart = previous.mrr_start;
  let mrrEnd = previous.mrr_end;
  for (const id of change.customers) {
    const before = previous.customers.get(id);
    if (before) {
      mrrStart -= before.mrr_start;
      mrrEnd -= before.mrr_end;
    }
  }
  for (const c of incoming) {
    mrrStart += c.mrr_start;
    mrrEnd += c.mrr_end;
  }
  const kept = previous.warnings.filter((w) => !change.customers.has(w.customer_id));
  const warnings: PeriodFold['warnings'] = [];
  let k = 0;
  for (const w of changed.warnings) {
    const record = warningRecords.get(w) as MrrInput;
    for (; k < kept.length; k++) {
      const earlier = warningRecords.get(kept[k] as object);
      if (!earlier) return undefined;
      if (byRecordTime(earlier, record) > 0) break;
      warnings.push(kept[k] as PeriodFold['warnings'][number]);
    }
    warnings.push(w);
  }
  for (; k < kept.length; k++) warnings.push(kept[k] as PeriodFold['warnings'][number]);
  return {
    currency: options.currency,
    from: options.from,
    to: options.to,
    customers,
    mrr_start: mrrStart,
    mrr_end: mrrEnd,
    warnings,
  };
}

function fold(
  records: readonly MrrInput[],
  options: { from: string; to: string; currency: string },
): PeriodFold {
  const start = monthStart(options.from);
  const end = monthStart(options.to, 1);
  const ordered = records.filter((r) => r.currency === options.currency && r.timestamp < end);
  ordered.sort(byRecordTime);
  const ledger = new MrrLedger(options.currency);
  const customers = new Map<string, CustomerPeriod>();
  const customer = (id: string, first: MrrInput): CustomerPeriod => {
    let found = customers.get(id);
    if (!found) {
      found = {
        customer_id: id,
        mrr_start: 0n,
        mrr_end: 0n,
        movements: [],
        records: [],
        cash: 0n,
        known: true,
      };
      customers.set(id, found);
      firstRecords.set(found, first);
    }
    return found;
  };
  let i = 0;
  for (; i < ordered.length && (ordered[i] as MrrInput).timestamp < start; i++) {
    const record = ordered[i] as MrrInput;
    ledger.apply(record);
    customer(record.customer_id, record);
  }
  const mrrStart = ledger.total;
  for (const c of customers.values()) c.mrr_start = ledger.customerMrr(c.customer_id);
  const warnings: PeriodFold['warnings'] = [];
  for (; i < ordered.length; i++) {
    const record = ordered[i] as MrrInput;
    const c = customer(record.customer_id, record);
    const { movement, warning } = ledger.apply(record);
    if (movement) c.movements.push(movement);
    if (warning) {
      const kept = { ...warning, record_id: record.id ?? null };
      warningRecords.set(kept, record);
      warnings.push(kept);
    }
    c.records.push(record);
    c.cash += record.amount;
  }
  for (const c of customers.values()) c.mrr_end = ledger.customerMrr(c.customer_id);
  return {
    currency: options.currency,
    from: options.from,
    to: options.to,
    customers,
    mrr_start: mrrStart,
    mrr_end: ledger.total,
    warnings,
  };
}

/** A customer's movements of one kind summed, micro-units. */
export function movementSum(c: CustomerPeriod, kind: MovementKind): bigint {
  let sum = 0n;
  for (const m of c.movements) if (m.kind === kind) sum += m.amount;
  return sum;
}
