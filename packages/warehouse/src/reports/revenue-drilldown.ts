// The drill-down of a revenue figure (dashboard.md): the movements, records or customers that make it up,
// optionally of one attribution group, from the same per-customer fold as the figure itself
// (revenue-period.ts), so the items' amounts add up exactly to the figure the dashboard shows.
import { formatMicros } from '@tally/contract';
import { kept } from './kept.ts';
import type { Money } from './monthly-revenue.ts';
import type { MovementKind, MrrInput } from './mrr-movements.ts';
import { attributionKey, type CustomerTouches } from './revenue-attribution.ts';
import { type CustomerPeriod, foldPeriod, MOVEMENT_KINDS, type PeriodFold } from './revenue-period.ts';
import { type AttributionDimension, RevenueQueryError, type Touch } from './revenue-scope.ts';

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
  /** The figure: the sum of the items' amounts (for paying_customers, the number of items). */
  total: Money;
  count: number;
  items: DrilldownItem[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An item with what it is sorted and summed by, before it is shaped. */
interface Found {
  time: number;
  transaction: string;
  micros: bigint;
  item: () => DrilldownItem;
}

function itemsOf(c: CustomerPeriod, figure: DrilldownFigure, out: Found[]): void {
  const customerItem = (amount: bigint): Found => ({
    time: Number.NEGATIVE_INFINITY,
    transaction: '',
    micros: amount,
    item: () => ({
      customer_id: c.customer_id,
      transaction_id: null,
      record_id: null,
      timestamp: null,
      event_type: null,
      movement: null,
      amount: formatMicros(amount),
    }),
  });
  switch (figure) {
    case 'cash_revenue':
      for (const r of c.records)
        out.push({
          time: r.timestamp,
          transaction: r.transaction_id,
          micros: r.amount,
          item: () => ({
            customer_id: c.customer_id,
            transaction_id: r.transaction_id,
            record_id: r.id ?? null,
            timestamp: iso(r.timestamp),
            event_type: r.event_type || null,
            movement: null,
            amount: formatMicros(r.amount),
          }),
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
          transaction: m.transaction_id,
          micros: m.amount,
          item: () => {
            const record = c.records.find((r) => r.transaction_id === m.transaction_id);
            return {
              customer_id: c.customer_id,
              transaction_id: m.transaction_id,
              record_id: record?.id ?? null,
              timestamp: iso(m.timestamp),
              event_type: record?.event_type || null,
              movement: m.kind,
              amount: formatMicros(m.amount),
            };
          },
        });
      }
  }
}

/** Text in code-unit order (as the engine sorts bytes, for the ids' ASCII): no locale rules to apply. */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const drilldowns = new WeakMap<PeriodFold, Map<string, Drilldown>>();
const groupDrilldowns = new WeakMap<PeriodFold, WeakMap<object, Map<string, Drilldown>>>();

/**
 * The items of `figure` over months from…to in `currency`, of one attribution group when `group` is given:
 * in time order (items without a time, a customer's MRR, first), then by customer and transaction. The
 * answer is kept per fold (and touches map), so a page asking again gets it at once: callers must not
 * change it.
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
  },
): Drilldown {
  if (!DRILLDOWN_FIGURES.includes(options.figure)) throw new RevenueQueryError('unknown figure');
  const fold = foldPeriod(records, options);
  const group = options.group;
  const answers = group
    ? kept(
        kept(groupDrilldowns, fold, () => new WeakMap()),
        group.touches,
        () => new Map<string, Drilldown>(),
      )
    : kept(drilldowns, fold, () => new Map<string, Drilldown>());
  const key = group ? `${options.figure}|${group.by}|${group.touch}|${group.key}` : options.figure;
  const found = answers.get(key);
  if (found) return found;
  const all: Array<Found & { customer: string }> = [];
  const scratch: Found[] = [];
  let total = 0n;
  for (const c of fold.customers.values()) {
    if (group && attributionKey(group.touches.get(c.customer_id), group.by, group.touch) !== group.key)
      continue;
    scratch.length = 0;
    itemsOf(c, options.figure, scratch);
    for (const f of scratch) {
      all.push({ ...f, customer: c.customer_id });
      total += options.figure === 'paying_customers' ? 1_000_000n : f.micros;
    }
  }
  all.sort(
    (a, b) =>
      a.time - b.time || compareText(a.customer, b.customer) || compareText(a.transaction, b.transaction),
  );
  const items = all.map((f) => f.item());
  const drilldown: Drilldown = {
    figure: options.figure,
    from: options.from,
    to: options.to,
    currency: options.currency,
    group: group ? { by: group.by, touch: group.touch, key: group.key } : null,
    total: formatMicros(total),
    count: items.length,
    items,
  };
  if (answers.size >= 32) answers.clear();
  answers.set(key, drilldown);
  return drilldown;
}
