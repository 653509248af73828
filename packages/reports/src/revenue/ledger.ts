// MRR movements as docs/revenue.md defines them, computed from the stored revenue records by a fold.
// MrrLedger holds one currency's state: each subscription's current MRR (a churn without mrr_impact takes
// all of it away; a recurring subscription without it adds its amount per month; a customer's MRR never
// goes below zero), each customer's sum, and whether the customer ever had MRR (new business vs
// reactivation). Records are applied in the order of their own timestamps, then arrival, then transaction
// id (byRecordTime), never of delivery. The state is per customer, so a record that arrives late or out of
// order changes only its customer's figures: the reports fold the stored records again (the dashboard's
// cached history refolds only the customers whose records changed: recordHistoryChange and memoOnFrozen
// below, revenue-cache.ts), and the revenue consumer refreshes mrr_movements per customer (mrr-table.ts).
// Money is held in integer micro-units (the warehouse's Decimal scale, 6) as BigInt, so that every sum is
// exact whatever its size.
import { divideRounded, formatMicros, type RevenueEventType } from '@tally/contract';

/** A stored revenue record, as the MRR rules read it. Money in micro-units. */
export interface MrrInput {
  transaction_id: string;
  /** The record id (envelope `id`), when read from the warehouse: drill-downs and warnings name it. */
  id?: string;
  customer_id: string;
  /** '' for records without one: they share the customer's default subscription. */
  customer_subscription_id: string;
  event_type: RevenueEventType | '';
  currency: string;
  amount: bigint;
  mrr_impact: bigint | null;
  is_recurring: boolean | null;
  /** metadata.interval ('monthly', 'annual', …) or ''. */
  interval: string;
  /** The record's own time (ms): the order of the fold. */
  timestamp: number;
  /** When Tally received it (ms): breaks ties between equal timestamps. */
  received_at: number;
}

export type MovementKind = 'new' | 'expansion' | 'reactivation' | 'contraction' | 'churn';

export const MOVEMENT_KINDS: readonly MovementKind[] = [
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
];

export interface MrrMovement {
  transaction_id: string;
  customer_id: string;
  currency: string;
  timestamp: number;
  kind: MovementKind;
  /** Size of the movement (always positive), micro-units. */
  amount: bigint;
  /** The customer's MRR before and after, micro-units. */
  prev: bigint;
  next: bigint;
}

export interface DataWarning {
  transaction_id: string;
  customer_id: string;
  timestamp: number;
  message: string;
}

/** The order of the fold: the record's own time, then arrival, then transaction id (deterministic). */
export function byRecordTime(a: MrrInput, b: MrrInput): number {
  return (
    a.timestamp - b.timestamp ||
    a.received_at - b.received_at ||
    (a.transaction_id < b.transaction_id ? -1 : a.transaction_id > b.transaction_id ? 1 : 0)
  );
}

/** Months of MRR that one payment of `interval` buys: an annual plan's amount / 12. */
function monthsOf(interval: string): bigint {
  switch (interval.toLowerCase()) {
    case 'annual':
    case 'annually':
    case 'yearly':
    case 'year':
      return 12n;
    case 'quarterly':
    case 'quarter':
      return 3n;
    default:
      return 1n;
  }
}

/**
 * The MRR state of one currency's customers while records are applied in time order. Apply records
 * with `apply`; read totals between records.
 */
export class MrrLedger {
  readonly currency: string;
  readonly #subscriptions = new Map<string, bigint>();
  /** Per customer, the sum of their subscriptions' MRR (never below zero). */
  readonly #sums = new Map<string, bigint>();
  readonly #everPaying = new Set<string>();
  #total = 0n;

  constructor(currency: string) {
    this.currency = currency;
  }

  /** Sum of every customer's MRR now, micro-units. */
  get total(): bigint {
    return this.#total;
  }

  /** Customers whose MRR is above zero now. */
  payingCustomers(): Set<string> {
    const paying = new Set<string>();
    for (const [customer, mrr] of this.#sums) if (mrr > 0n) paying.add(customer);
    return paying;
  }

  customerMrr(customer: string): bigint {
    return this.#sums.get(customer) ?? 0n;
  }

  /** One subscription's MRR now ('' is the customer's default subscription), micro-units. */
  subscriptionMrr(customer: string, subscription: string): bigint {
    return this.#subscriptions.get(`${customer}\u0000${subscription}`) ?? 0n;
  }

  /** Whether the customer ever had MRR above zero (a new MRR would be a reactivation). */
  everPaid(customer: string): boolean {
    return this.#everPaying.has(customer);
  }

  /**
   * A ledger with this one's state for every customer but `replaced`, and `other`'s for those (`other`
   * holds only their records; `replacedRecords` are their records this ledger applied, which name their
   * subscriptions). The state is per customer, so this equals folding every record into one ledger.
   */
  withCustomersOf(
    other: MrrLedger,
    replaced: ReadonlySet<string>,
    replacedRecords: readonly MrrInput[],
  ): MrrLedger {
    const out = new MrrLedger(this.currency);
    for (const [key, value] of this.#subscriptions) out.#subscriptions.set(key, value);
    for (const r of replacedRecords)
      out.#subscriptions.delete(`${r.customer_id}\u0000${r.customer_subscription_id}`);
    for (const [key, value] of other.#subscriptions) out.#subscriptions.set(key, value);
    let total = this.#total;
    for (const [customer, mrr] of this.#sums) {
      if (replaced.has(customer)) total -= mrr;
      else out.#sums.set(customer, mrr);
    }
    for (const [customer, mrr] of other.#sums) out.#sums.set(customer, mrr);
    for (const customer of this.#everPaying) if (!replaced.has(customer)) out.#everPaying.add(customer);
    for (const customer of other.#everPaying) out.#everPaying.add(customer);
    out.#total = total + other.#total;
    return out;
  }

  apply(record: MrrInput): { movement: MrrMovement | null; warning: DataWarning | null } {
    const key = `${record.customer_id}\u0000${record.customer_subscription_id}`;
    const current = this.#subscriptions.get(key) ?? 0n;
    let next = current;
    let warning: string | null = null;
    if (record.mrr_impact !== null) {
      next = current + record.mrr_impact;
    } else if (record.event_type === 'churn') {
      next = 0n;
    } else if (record.event_type === 'subscription' && record.is_recurring === true) {
      next = current + divideRounded(record.amount, monthsOf(record.interval));
    } else if (record.event_type === 'upgrade' || record.event_type === 'downgrade') {
      warning = `${record.event_type} without mrr_impact: MRR unchanged`;
    }
    // The customer's MRR is the sum over their subscriptions. Taking away more than there is is bad
    // data: reported, and the customer's MRR stops at zero (a later subscription starts from zero).
    const sumBefore = this.#sums.get(record.customer_id) ?? 0n;
    let sumAfter = sumBefore - current + next;
    if (sumAfter < 0n) {
      warning = `the customer's MRR would be ${formatMicros(sumAfter)}: counted as 0`;
      next -= sumAfter;
      sumAfter = 0n;
    }
    this.#subscriptions.set(key, next);
    this.#sums.set(record.customer_id, sumAfter);
    const prev = sumBefore;
    const after = sumAfter;
    this.#total += after - prev;
    const kind = classify(prev, after, this.#everPaying.has(record.customer_id));
    if (after > 0n) this.#everPaying.add(record.customer_id);
    return {
      movement: kind
        ? {
            transaction_id: record.transaction_id,
            customer_id: record.customer_id,
            currency: record.currency,
            timestamp: record.timestamp,
            kind,
            amount: kind === 'churn' ? prev : after > prev ? after - prev : prev - after,
            prev,
            next: after,
          }
        : null,
      warning: warning
        ? {
            transaction_id: record.transaction_id,
            customer_id: record.customer_id,
            timestamp: record.timestamp,
            message: warning,
          }
        : null,
    };
  }
}

/** The movement table of docs/revenue.md: decided by the customer's MRR before and after. */
export function classify(prev: bigint, next: bigint, everPaying: boolean): MovementKind | null {
  if (next === prev) return null;
  if (prev <= 0n) return next > 0n ? (everPaying ? 'reactivation' : 'new') : null;
  if (next > prev) return 'expansion';
  return next > 0n ? 'contraction' : 'churn';
}

/** Every movement and data warning of these records (any order; one currency or several). */
export function mrrMovements(records: readonly MrrInput[]): {
  movements: MrrMovement[];
  warnings: DataWarning[];
} {
  const ledgers = new Map<string, MrrLedger>();
  const movements: MrrMovement[] = [];
  const warnings: DataWarning[] = [];
  for (const record of [...records].sort(byRecordTime)) {
    const ledger = ledgers.get(record.currency) ?? new MrrLedger(record.currency);
    ledgers.set(record.currency, ledger);
    const { movement, warning } = ledger.apply(record);
    if (movement) movements.push(movement);
    if (warning) warnings.push(warning);
  }
  return { movements, warnings };
}
