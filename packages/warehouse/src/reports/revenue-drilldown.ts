// The drill-down of a revenue figure (dashboard.md): the movements, records or customers that make it up,
// optionally of one attribution group, from the same per-customer fold as the figure itself
// (revenue-period.ts), so the items' amounts add up exactly to the figure the dashboard shows.
import { formatMicros, toMicros } from '@tally/contract';
import type { Money } from './monthly-revenue.ts';
import type { MovementKind, MrrInput } from './mrr-movements.ts';
import { attributionKey, type CustomerTouches } from './revenue-attribution.ts';
import { type CustomerPeriod, foldPeriod, MOVEMENT_KINDS } from './revenue-period.ts';
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

function itemsOf(c: CustomerPeriod, figure: DrilldownFigure): DrilldownItem[] {
  const customerItem = (amount: bigint): DrilldownItem => ({
    customer_id: c.customer_id,
    transaction_id: null,
    record_id: null,
    timestamp: null,
    event_type: null,
    movement: null,
    amount: formatMicros(amount),
  });
  switch (figure) {
    case 'cash_revenue':
      return c.records.map((r) => ({
        customer_id: c.customer_id,
        transaction_id: r.transaction_id,
        record_id: r.id ?? null,
        timestamp: iso(r.timestamp),
        event_type: r.event_type || null,
        movement: null,
        amount: formatMicros(r.amount),
      }));
    case 'mrr_start':
      return c.mrr_start === 0n ? [] : [customerItem(c.mrr_start)];
    case 'mrr_end':
    case 'paying_customers':
      return c.mrr_end === 0n ? [] : [customerItem(c.mrr_end)];
    default: {
      const ids = new Map(c.records.map((r) => [r.transaction_id, r]));
      return c.movements
        .filter((m) => m.kind === figure)
        .map((m) => {
          const record = ids.get(m.transaction_id);
          return {
            customer_id: c.customer_id,
            transaction_id: m.transaction_id,
            record_id: record?.id ?? null,
            timestamp: iso(m.timestamp),
            event_type: record?.event_type || null,
            movement: m.kind,
            amount: formatMicros(m.amount),
          };
        });
    }
  }
}

/** The items of `figure` over months from…to in `currency`, of one attribution group when `group` is given. */
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
  const items: DrilldownItem[] = [];
  let total = 0n;
  for (const c of fold.customers.values()) {
    if (group && attributionKey(group.touches.get(c.customer_id), group.by, group.touch) !== group.key)
      continue;
    for (const item of itemsOf(c, options.figure)) {
      items.push(item);
      total += options.figure === 'paying_customers' ? 1_000_000n : toMicros(item.amount);
    }
  }
  items.sort(
    (a, b) =>
      (a.timestamp ?? '').localeCompare(b.timestamp ?? '') ||
      a.customer_id.localeCompare(b.customer_id) ||
      (a.transaction_id ?? '').localeCompare(b.transaction_id ?? ''),
  );
  return {
    figure: options.figure,
    from: options.from,
    to: options.to,
    currency: options.currency,
    group: group ? { by: group.by, touch: group.touch, key: group.key } : null,
    total: formatMicros(total),
    count: items.length,
    items,
  };
}
