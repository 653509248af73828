// The cached revenue history's refresh against the fold from scratch, on random histories through real
// chDB: records land in three deliveries, out of their own time order, some delivered twice (a later copy
// with other figures, which ReplacingMergeTree drops) and some in several currencies. Before each
// delivery every panel's figures are taken from the cache (so that the next read refreshes only the
// changed buckets and derives its folds from these), and after it every panel's figures from the cache
// must equal those of an uncached read folded from scratch: the same customers in the same order, the
// same warnings in the same order, the same BigInt sums.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revenueAttribution } from './attribution.ts';
import { customerList, foldHistory } from './customers.ts';
import { DRILLDOWN_FIGURES, revenueDrilldown } from './drilldown.ts';
import { readMrrInputs } from './history.ts';
import { readMrrInputsCached } from './history-cache.ts';
import type { MrrInput } from './ledger.ts';
import { monthlyRevenue } from './monthly.ts';
import { foldPeriod } from './period.ts';
import { reconcile } from './reconciliation.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-revenue-cache-property-'));
let warehouse: Warehouse;

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
}, 60_000);

afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

const DAY = 86_400_000;
const JANUARY = Date.UTC(2026, 0, 1);
const until = Date.UTC(2026, 5, 1);
const periods = [
  { from: '2026-01', to: '2026-05' },
  { from: '2026-03', to: '2026-03' },
];

const sql = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** Every figure the revenue panels show of one read (`records` frozen: cached; not: folded from scratch). */
function figures(records: readonly MrrInput[], all: readonly MrrInput[]) {
  const touches = new Map([['c1', { first: touch('ads'), last: null }]]);
  const perPeriod = periods.map((period) => {
    const options = { ...period, currency: 'USD' };
    const fold = foldPeriod(records, options);
    return {
      order: [...fold.customers.keys()],
      customers: [...fold.customers.values()],
      mrr: [fold.mrr_start, fold.mrr_end],
      warnings: fold.warnings,
      attribution: revenueAttribution(records, { ...options, by: 'channel', touch: 'first', touches }),
      drilldowns: DRILLDOWN_FIGURES.map((figure) => revenueDrilldown(records, { ...options, figure })),
      reconciliation: reconcile(records, { month: period.to, currency: 'USD', stored: null }),
    };
  });
  const history = foldHistory(all, 'USD');
  return {
    perPeriod,
    mrr: monthlyRevenue(records, '2026-01', '2026-05', ['USD']),
    mrrAllCurrencies: monthlyRevenue(all, '2026-01', '2026-06'),
    customers: customerList(all, { currency: 'USD', touches }),
    history: {
      ranked: history.ranked,
      purchased: [...history.purchased].sort(),
      total: history.ledger.total,
      everPaid: history.ranked.map((r) => history.ledger.everPaid(r.customer)),
    },
  };
}

function touch(channel: string) {
  return {
    visitor_id: 'v',
    start: JANUARY,
    channel,
    source: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    entry_path: '/',
  };
}

const record = fc.record({
  customer: fc.constantFrom('c1', 'c2', 'c3', 'c4', 'c5'),
  subscription: fc.constantFrom('', 's1', 's2'),
  event_type: fc.constantFrom(
    'subscription',
    'upgrade',
    'downgrade',
    'churn',
    'renewal',
    'purchase',
    'refund',
  ),
  amount: fc.integer({ min: 1, max: 500 }),
  mrr_impact: fc.option(fc.integer({ min: -150, max: 200 }), { nil: null }),
  is_recurring: fc.option(fc.boolean(), { nil: null }),
  annual: fc.boolean(),
  currency: fc.constantFrom('USD', 'USD', 'EUR'),
  day: fc.integer({ min: 0, max: 150 }),
  /** Equal times break ties by arrival: a few records share a day to the millisecond. */
  sameInstant: fc.boolean(),
  delivery: fc.integer({ min: 0, max: 2 }),
  /** Delivered again in a later delivery, with another amount (the first copy is kept). */
  again: fc.boolean(),
});

describe('readMrrInputsCached refresh', () => {
  it('gives every panel the figures of a fold from scratch after each delivery', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 30 }), async (generated) => {
        const project = `p${run++}`;
        let sequence = 0;
        const row = (g: (typeof generated)[number], i: number, copy: boolean, delivery: number) => {
          sequence += 1;
          return {
            project_id: project,
            transaction_id: `t${i}`,
            id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
            customer_id: g.customer,
            visitor_id: '',
            session_id: '',
            event_type: g.event_type,
            amount: String(g.event_type === 'refund' ? -g.amount : copy ? g.amount + 1000 : g.amount),
            currency: g.currency,
            mrr_impact: g.mrr_impact === null ? null : String(g.mrr_impact),
            is_recurring: g.is_recurring,
            customer_subscription_id: g.subscription,
            payment_processor: 'stripe',
            timestamp: sql(JANUARY + g.day * DAY + (g.sameInstant ? 0 : (i % 7) * 1000)),
            received_at: sql(Date.UTC(2026, 6, 1) + delivery * DAY + sequence),
            timestamp_clamped: false,
            metadata: g.annual ? { interval: 'annual' } : {},
            payload: '{}',
            user_agent: '',
          };
        };
        const read = async () => {
          const all = await readMrrInputsCached(warehouse, { project });
          const upTo = await readMrrInputsCached(warehouse, { project, currency: 'USD', until });
          return { all, upTo };
        };
        for (let delivery = 0; delivery < 3; delivery++) {
          // The cache's figures before the delivery: the next read's folds derive from these.
          const before = await read();
          figures(before.upTo, before.all);
          const rows = generated.flatMap((g, i) => [
            ...(g.delivery === delivery ? [row(g, i, false, delivery)] : []),
            ...(g.again && g.delivery + 1 === delivery ? [row(g, i, true, delivery)] : []),
          ]);
          if (rows.length > 0) await warehouse.insert('revenue', rows.reverse());
          const cached = await read();
          // A delivery with a first copy must refresh the cache. One of copies only may not: a background
          // merge can fold a copy into its first before the probe reads, leaving the stored rows as before.
          if (generated.some((g) => g.delivery === delivery)) expect(cached.all).not.toBe(before.all);
          const fresh = await readMrrInputs(warehouse, { project });
          const freshUpTo = await readMrrInputs(warehouse, { project, currency: 'USD', until });
          expect(cached.all).toEqual(fresh);
          expect(cached.upTo).toEqual(freshUpTo);
          expect(figures(cached.upTo, cached.all)).toEqual(figures(freshUpTo, fresh));
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
