// The cached revenue history against real chDB: a repeated read is served from the cache (the same frozen
// array, its folds shared), and every change to the stored revenue (a new record, a record that arrives out
// of order, a redelivered copy) is in the very next read, whose figures equal an uncached read's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revenueRow } from '../testing.ts';
import { revenueAttribution } from './attribution.ts';
import { customerList } from './customers.ts';
import { readMrrInputs } from './history.ts';
import { readMrrInputsCached } from './history-cache.ts';
import type { MrrInput } from './ledger.ts';
import { monthlyRevenue } from './monthly.ts';
import { foldPeriod } from './period.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-revenue-cache-'));
let warehouse: Warehouse;
let sequence = 0;

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
}, 60_000);

afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Stores one revenue record of project `cache` as the revenue consumer would. */
async function land(record: {
  transaction_id: string;
  customer_id: string;
  event_type: string;
  amount: string;
  mrr_impact: string | null;
  timestamp: string;
  received_at?: string;
}): Promise<void> {
  sequence += 1;
  await warehouse.insert('revenue', [
    revenueRow({
      project_id: 'cache',
      id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
      is_recurring: record.event_type === 'subscription',
      received_at: `2026-03-01 00:00:${String(sequence).padStart(2, '0')}.000`,
      ...record,
    }),
  ]);
}

const range = { from: '2026-01', to: '2026-03', currency: 'USD' };
const until = Date.UTC(2026, 3, 1);

/** The figures every revenue panel shows, from the cached read and from a fresh uncached one. */
async function figures() {
  const cached = await readMrrInputsCached(warehouse, { project: 'cache', currency: 'USD', until });
  const fresh = await readMrrInputs(warehouse, { project: 'cache', currency: 'USD', until });
  const of = (records: readonly MrrInput[]) => ({
    mrr: monthlyRevenue(records, range.from, range.to, ['USD']),
    attribution: revenueAttribution(records, { ...range, by: 'channel', touch: 'first', touches: new Map() }),
    customers: customerList(records, { currency: 'USD', touches: new Map() }),
  });
  return { cached, viaCache: of(cached), uncached: of(fresh) };
}

describe('readMrrInputsCached', () => {
  it('serves a repeated read from the cache and shares its fold', async () => {
    await land({
      transaction_id: 'a1',
      customer_id: 'alice',
      event_type: 'subscription',
      amount: '49',
      mrr_impact: '49',
      timestamp: '2026-01-10 00:00:00.000',
    });
    const first = await figures();
    const again = await readMrrInputsCached(warehouse, { project: 'cache', currency: 'USD', until });
    expect(again).toBe(first.cached);
    expect(Object.isFrozen(again)).toBe(true);
    expect(foldPeriod(again, range)).toBe(foldPeriod(first.cached, range));
    expect(first.viaCache).toEqual(first.uncached);
    expect(first.viaCache.mrr.at(-1)?.mrr_end).toBe('49');
  });

  it('sees a record that lands after a cached read in the next read', async () => {
    const before = await figures();
    await land({
      transaction_id: 'b1',
      customer_id: 'bob',
      event_type: 'subscription',
      amount: '20.000001',
      mrr_impact: '20.000001',
      timestamp: '2026-02-03 00:00:00.000',
    });
    const after = await figures();
    expect(after.cached).not.toBe(before.cached);
    expect(after.viaCache).toEqual(after.uncached);
    expect(after.viaCache.mrr.at(-1)?.mrr_end).toBe('69.000001');
    expect(after.viaCache.customers.map((c) => c.customer_id)).toEqual(['alice', 'bob']);
  });

  it('places a record delivered out of order, and keeps the first copy of a redelivered one', async () => {
    // An upgrade dated before bob's subscription arrives after it: the fold re-classifies.
    await land({
      transaction_id: 'b0',
      customer_id: 'bob',
      event_type: 'upgrade',
      amount: '5',
      mrr_impact: '5',
      timestamp: '2026-01-20 00:00:00.000',
    });
    const reordered = await figures();
    expect(reordered.viaCache).toEqual(reordered.uncached);
    expect(reordered.viaCache.mrr.at(-1)?.mrr_end).toBe('74.000001');
    // A copy of a1 received later with another amount: ReplacingMergeTree keeps the first, so do the figures.
    await land({
      transaction_id: 'a1',
      customer_id: 'alice',
      event_type: 'subscription',
      amount: '999',
      mrr_impact: '999',
      timestamp: '2026-01-10 00:00:00.000',
    });
    const redelivered = await figures();
    expect(redelivered.viaCache).toEqual(redelivered.uncached);
    expect(redelivered.viaCache.mrr.at(-1)?.mrr_end).toBe('74.000001');
  });

  it("refreshes only what changed: other customers' figures are the earlier fold's, the changed ones folded again", async () => {
    const before = await figures();
    const earlier = foldPeriod(before.cached, range);
    const alice = earlier.customers.get('alice');
    await land({
      transaction_id: 'c1',
      customer_id: 'carol',
      event_type: 'subscription',
      amount: '7',
      mrr_impact: '7',
      timestamp: '2026-01-01 00:00:00.000',
    });
    const after = await figures();
    const refreshed = foldPeriod(after.cached, range);
    expect(refreshed).not.toBe(earlier);
    // Derived from the earlier fold: alice's figures are the very same object; carol's are new, and first.
    expect(refreshed.customers.get('alice')).toBe(alice);
    expect([...refreshed.customers.keys()]).toEqual(['carol', 'alice', 'bob']);
    expect(after.viaCache).toEqual(after.uncached);
    expect(after.viaCache.mrr.at(-1)?.mrr_end).toBe('81.000001');
  });

  it('refreshes many buckets at once (thousands of cut points) into the same history as a fresh read', async () => {
    const many = (from: number, n: number, received: string) =>
      warehouse.insert(
        'revenue',
        Array.from({ length: n }, (_, i) =>
          revenueRow({
            project_id: 'cache',
            transaction_id: `many_${from + i}`,
            customer_id: `m${(from + i) % 50}`,
            timestamp: `2026-02-${String(1 + ((from + i) % 27)).padStart(2, '0')} ${String((from + i) % 24).padStart(2, '0')}:00:00.000`,
            received_at: received,
          }),
        ),
      );
    await many(0, 12_000, '2026-03-02 00:00:00.000');
    await figures();
    // 400 of them again (later copies: FINAL keeps the first) and 400 new ones: some 730 of the 4,096
    // buckets change, with some 2,000 records each side: thousands of cut points.
    await many(11_600, 800, '2026-03-03 00:00:00.000');
    const after = await figures();
    expect(after.cached).toEqual(
      await readMrrInputs(warehouse, { project: 'cache', currency: 'USD', until }),
    );
    expect(after.viaCache).toEqual(after.uncached);
  });
});
