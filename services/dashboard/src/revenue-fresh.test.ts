// The revenue panels see new revenue on the very next request (inject, real chDB, file token store): each
// panel is asked once so that its history and folds are cached, then a record lands in the warehouse
// (a new customer, an upgrade dated before an earlier record of its customer, a redelivered copy) and the
// next request of each panel, without waiting or retrying, shows figures that include it.

import { revenueRow } from '@tally/reports/testing';
import type { Warehouse } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

let dashboard: TestDashboard;
let warehouse: Warehouse;
let app: FastifyInstance;
let key: string;
let sequence = 0;

beforeAll(async () => {
  dashboard = await startTestDashboard('revenue-fresh', 'fresh');
  ({ warehouse, app, key } = dashboard);
}, 60_000);

afterAll(() => dashboard?.close());

async function land(record: {
  transaction_id: string;
  customer_id: string;
  event_type: string;
  amount: string;
  mrr_impact: string | null;
  day: string;
}): Promise<void> {
  sequence += 1;
  const { day, ...rest } = record;
  await warehouse.insert('revenue', [
    revenueRow({
      project_id: 'fresh',
      id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
      is_recurring: record.event_type !== 'purchase',
      timestamp: `${day} 12:00:00.000`,
      received_at: `2026-04-01 00:00:${String(sequence).padStart(2, '0')}.000`,
      ...rest,
    }),
  ]);
}

const get = async (path: string) => {
  const res = await app.inject({
    url: `/api/v1/projects/fresh/revenue/${path}`,
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.statusCode, path).toBe(200);
  return res.json();
};

/** What each revenue panel shows that a new record must change. */
async function panels() {
  const mrr = (await get('mrr?from=2026-01&to=2026-03&currency=USD')) as Array<Record<string, unknown>>;
  const attribution = await get('attribution?from=2026-01&to=2026-03&currency=USD');
  const reconciliation = await get('reconciliation?month=2026-02&currency=USD');
  const drilldown = await get('records?figure=new&from=2026-01&to=2026-03&currency=USD');
  const customers = await get('customers?currency=USD');
  return {
    mrrEnd: mrr.map((m) => m.mrr_end),
    newMrr: mrr.map((m) => m.new),
    attribution: attribution.total,
    reconciliation: { start: reconciliation.bridge.mrr_start, end: reconciliation.bridge.mrr_end },
    drilldown: drilldown.items.map((i: Record<string, unknown>) => [i.customer_id, i.amount]),
    customers: customers.customers.map((c: Record<string, unknown>) => [c.customer_id, c.mrr, c.records]),
  };
}

describe('revenue panels after new revenue', () => {
  it('show a new record, an out-of-order one and ignore a redelivered copy on the next request', async () => {
    await land({
      transaction_id: 't1',
      customer_id: 'ann',
      event_type: 'subscription',
      amount: '10',
      mrr_impact: '10',
      day: '2026-01-05',
    });
    await land({
      transaction_id: 't2',
      customer_id: 'bo',
      event_type: 'subscription',
      amount: '20',
      mrr_impact: '20',
      day: '2026-02-05',
    });
    const first = await panels();
    expect(first.mrrEnd).toEqual(['10', '30', '30']);
    expect(first.customers).toEqual([
      ['bo', '20', 1],
      ['ann', '10', 1],
    ]);

    // A new customer in March.
    await land({
      transaction_id: 't3',
      customer_id: 'cy',
      event_type: 'subscription',
      amount: '5',
      mrr_impact: '5',
      day: '2026-03-02',
    });
    const second = await panels();
    expect(second.mrrEnd).toEqual(['10', '30', '35']);
    expect(second.newMrr).toEqual(['10', '20', '5']);
    expect(second.drilldown).toEqual([
      ['ann', '10'],
      ['bo', '20'],
      ['cy', '5'],
    ]);
    expect(second.customers).toEqual([
      ['bo', '20', 1],
      ['ann', '10', 1],
      ['cy', '5', 1],
    ]);

    // An upgrade of ann dated in January that arrives after everything else.
    await land({
      transaction_id: 't0',
      customer_id: 'ann',
      event_type: 'upgrade',
      amount: '15',
      mrr_impact: '15',
      day: '2026-01-20',
    });
    const third = await panels();
    expect(third.mrrEnd).toEqual(['25', '45', '50']);
    expect(third.reconciliation).toEqual({ start: '25', end: '45' });
    expect(third.customers).toEqual([
      ['ann', '25', 2],
      ['bo', '20', 1],
      ['cy', '5', 1],
    ]);

    // A redelivered copy of t2 with another amount: the first copy is kept, nothing changes.
    await land({
      transaction_id: 't2',
      customer_id: 'bo',
      event_type: 'subscription',
      amount: '99',
      mrr_impact: '99',
      day: '2026-02-05',
    });
    expect(await panels()).toEqual(third);
  });
});
