// The drill-down of a revenue figure (docs/revenue.md): the movements, records or customers that make it up,
// optionally of one attribution group, from the same per-customer fold as the figure itself
// (period.ts), so the items' amounts add up exactly to the figure the dashboard shows.
import { formatMicros } from '@tally/contract';
import { kept } from './history.ts';
import { MOVEMENT_KINDS, type MovementKind, type MrrInput, type MrrMovement } from './ledger.ts';
import type { Money } from './money.ts';
import { type CustomerPeriod, foldPeriod, type PeriodFold } from './period.ts';
import { type AttributionDimension, RevenueQueryError, type Touch } from './scope.ts';
import { attributionKey, type CustomerTouches } from './touches.ts';

export const DRILLDOWN_FIGURES = [
  ...MOVEMENT_KINDS,
  'cash_revenue',
  'mrr_start',
  'mrr_end',
  'paying_customers',
] as const;
export type DrilldownFigure = (typeof DRILLDOWN_FIGURES)[number];

/** A movement, a record or a customer's MRR: fields that do not apply are null. */
export interface DrilldownItem {
  customer_id: string;
  transaction_id: string | null;
  record_id: string | null;
  /** The record's own time, ISO 8601 (UTC). */
  timestamp: string | null;
  event_type: string | null;
  movement: MovementKind | null;
  /** The item's share of the figure (a movement's size, a record's amount, a customer's MRR). */
  amount: Money;
}

export interface Drilldown {
  figure: DrilldownFigure;
  from: string;
  to: string;
  currency: string;
  /** The attribution group the items are limited to, if any. */
  group: { by: AttributionDimension; touch: Touch; key: string } | null;
  /** The figure: the sum of all the items' amounts (for paying_customers, the number of items). */
  total: Money;
  /** How many items make up the figure (all of them, whatever page `items` is). */
  count: number;
  /** Where `items` starts among them. */
  offset: number;
  items: DrilldownItem[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An item with what it is sorted and summed by, shaped (DrilldownItem) only when it is handed out. */
interface Found {
  time: number;
  customer: CustomerPeriod;
  transaction: string;
  micros: bigint;
  /** The record (cash revenue) or the movement (a movement figure); null for a customer's MRR. */
  record: MrrInput | null;
  movement: MrrMovement | null;
}

function itemsOf(c: CustomerPeriod, figure: DrilldownFigure, out: Found[]): void {
  const customerItem = (micros: bigint): Found => ({
    time: Number.NEGATIVE_INFINITY,
    customer: c,
    transaction: '',
    micros,
    record: null,
    movement: null,
  });
  switch (figure) {
    case 'cash_revenue':
      for (const r of c.records)
        out.push({
          time: r.timestamp,
          customer: c,
          transaction: r.transaction_id,
          micros: r.amount,
          record: r,
          movement: null,
        });
      return;
    case 'mrr_start':
      if (c.mrr_start !== 0n) out.push(customerItem(c.mrr_start));
      return;
    case 'mrr_end':
    case 'paying_customers':
      if (c.mrr_end !== 0n) out.push(customerItem(c.mrr_end));
      return;
    default:
      for (const m of c.movements) {
        if (m.kind !== figure) continue;
        out.push({
          time: m.timestamp,
          customer: c,
          transaction: m.transaction_id,
          micros: m.amount,
          record: null,
          movement: m,
        });
      }
  }
}

function shapeItem(f: Found): DrilldownItem {
  const customer_id = f.customer.customer_id;
  if (f.record)
    return {
      customer_id,
      transaction_id: f.record.transaction_id,
      record_id: f.record.id ?? null,
      timestamp: iso(f.record.timestamp),
      event_type: f.record.event_type || null,
      movement: null,
      amount: formatMicros(f.micros),
    };
  if (f.movement) {
    const m = f.movement;
    const record = f.customer.records.find((r) => r.transaction_id === m.transaction_id);
    return {
      customer_id,
      transaction_id: m.transaction_id,
      record_id: record?.id ?? null,
      timestamp: iso(m.timestamp),
      event_type: record?.event_type || null,
      movement: m.kind,
      amount: formatMicros(f.micros),
    };
  }
  return {
    customer_id,
    transaction_id: null,
    record_id: null,
    timestamp: null,
    event_type: null,
    movement: null,
    amount: formatMicros(f.micros),
  };
}

/** Text in code-unit order (as the engine sorts bytes, for the ids' ASCII): no locale rules to apply. */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A figure's items in order and their sum, before any is shaped. */
interface Listing {
  found: Found[];
  total: bigint;
}

const listings = new WeakMap<PeriodFold, Map<string, Listing>>();
const groupListings = new WeakMap<PeriodFold, WeakMap<object, Map<string, Listing>>>();

/**
 * The items of `figure` over months from…to in `currency`, of one attribution group when `group` is given:
 * in time order (items without a time, a customer's MRR, first), then by customer and transaction; all of
 * them, or `limit` from `offset` on (`count` and `total` are always the whole figure's). The ordered list
 * is kept per fold (and touches map), so a page asking again, or for the next items, only shapes its own.
 */
export function revenueDrilldown(
  records: readonly MrrInput[],
  options: {
    figure: DrilldownFigure;
    from: string;
    to: string;
    currency: string;
    group?: {
      by: AttributionDimension;
      touch: Touch;
      key: string;
      touches: ReadonlyMap<string, CustomerTouches>;
    };
    offset?: number;
    limit?: number;
  },
): Drilldown {
  if (!DRILLDOWN_FIGURES.includes(options.figure)) throw new RevenueQueryError('unknown figure');
  const fold = foldPeriod(records, options);
  const group = options.group;
  const answers = group
    ? kept(
        kept(groupListings, fold, () => new WeakMap()),
        group.touches,
        () => new Map<string, Listing>(),
      )
    : kept(listings, fold, () => new Map<string, Listing>());
  const key = group ? `${options.figure}|${group.by}|${group.touch}|${group.key}` : options.figure;
  let listing = answers.get(key);
  if (!listing) {
    const found: Found[] = [];
    for (const c of fold.customers.values()) {
      if (group && attributionKey(group.touches.get(c.customer_id), group.by, group.touch) !== group.key)
        continue;
      itemsOf(c, options.figure, found);
    }
    let total = 0n;
    if (options.figure === 'paying_customers') total = BigInt(found.length) * 1_000_000n;
    else for (const f of found) total += f.micros;
    found.sort(
      (a, b) =>
        a.time - b.time ||
        compareText(a.customer.customer_id, b.customer.customer_id) ||
        compareText(a.transaction, b.transaction),
    );
    listing = { found, total };
    if (answers.size >= 32) answers.clear();
    answers.set(key, listing);
  }
  const offset = options.offset ?? 0;
  const page = listing.found.slice(offset, options.limit === undefined ? undefined : offset + options.limit);
  return {
    figure: options.figure,
    from: options.from,
    to: options.to,
    currency: options.currency,
    group: group ? { by: group.by, touch: group.touch, key: group.key } : null,
    total: formatMicros(listing.total),
    count: listing.found.length,
    offset,
    items: page.map(shapeItem),
  };
}
