// The dashboard warms the revenue caches when it starts (revenue-warmer.ts; real chDB, inject): after
// warming, the revenue page's panels of the default range read nothing but the caches' probes (no history,
// no touches: the queries the first request of a process would otherwise run), and their figures are
// those of a dashboard that did not warm. Stopping the warmer before it ran warms nothing.
import { revenueRow } from '@tally/reports/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueWarmer } from './revenue-warmer.ts';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

let dashboard: TestDashboard;
const NOW = Date.parse('2026-03-15T12:00:00Z');
const queries: string[] = [];

beforeAll(async () => {
  dashboard = await startTestDashboard('revenue-warmer', 'warm');
  const rows = ['ann', 'bo', 'cy'].map((customer, i) =>
    revenueRow({
      project_id: 'warm',
      transaction_id: `tx_${i}`,
      customer_id: customer,
      event_type: 'subscription',
      amount: `${10 * (i + 1)}`,
      mrr_impact: `${10 * (i + 1)}`,
      currency: i === 2 ? 'EUR' : 'USD',
      timestamp: `2026-0${i + 1}-10 12:00:00.000`,
      received_at: `2026-03-01 00:00:0${i}.000`,
    }),
  );
  await dashboard.warehouse.insert('revenue', rows);
  // Every statement the routes and the warmer run on this warehouse, to count what a request reads.
  const { warehouse } = dashboard;
  const query = warehouse.query.bind(warehouse);
  warehouse.query = ((sql: string, params?: never) => {
    queries.push(sql);
    return query(sql, params);
  }) as typeof warehouse.query;
}, 60_000);

afterAll(() => dashboard?.close());

const page = async () => {
  const get = async (path: string) => {
    const res = await dashboard.app.inject({
      url: `/api/v1/projects/warm/revenue/${path}`,
      headers: { authorization: `Bearer ${dashboard.key}` },
    });
    expect(res.statusCode, path).toBe(200);
    return res.json();
  };
  return {
    mrr: await get('mrr?from=2025-04&to=2026-03&currency=USD'),
    attribution: await get('attribution?from=2025-04&to=2026-03&currency=USD'),
    customers: await get('customers?currency=USD'),
  };
};

describe('revenue warmer', () => {
  it('stopped before it ran, warms nothing', async () => {
    const warmer = startRevenueWarmer(dashboard.warehouse, pino({ level: 'silent' }), NOW);
    await warmer.stop();
    expect(queries.filter((q) => q.includes('arraySort('))).toEqual([]);
    queries.length = 0;
  });

  it('reads the histories and touches at start; the panels then only probe, with the same figures', async () => {
    const warmer = startRevenueWarmer(dashboard.warehouse, pino({ level: 'silent' }), NOW);
    await warmer.done;
    // Both currencies' histories (the whole history reads, `arraySort(`) and the project's touches.
    expect(queries.filter((q) => q.includes('arraySort(')).length).toBe(2);
    expect(queries.some((q) => q.includes('argMin('))).toBe(true);
    queries.length = 0;
    const warmed = await page();
    // Probes only: no history read, no touches read, no customers of the buckets read.
    expect(
      queries.filter(
        (q) => q.includes('arraySort(') || q.includes('argMin(') || q.includes('groupUniqArray('),
      ),
    ).toEqual([]);
    expect(warmed.mrr.at(-1).mrr_end).toBe('30');
    expect(warmed.attribution.total.mrr_end).toBe('30');
    expect(warmed.customers.total).toBe(2);
  });
});
