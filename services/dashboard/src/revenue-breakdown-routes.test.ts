// The revenue breakdown, the revenue filters and the metadata search through the dashboard's routes
// (inject, real chDB): the worked example of docs/revenue.md stored out of order and partly twice gives
// a breakdown by plan whose rows add up to the MRR report, filters that narrow the MRR report, attribution,
// drill-down and customers to the same customers, a search that lists the records with a metadata value,
// CSV, and a share link sees them only when it includes revenue.
import { formatMicros, toMicros } from '@tally/contract';
import { workedExample } from '@tally/reports/testing';
import type { Warehouse } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

let warehouse: Warehouse;
let dashboard: TestDashboard;
let app: FastifyInstance;
let key: string;
let shareWithout: string;
let shareWith: string;
const BASE = '/api/v1/projects/rb/revenue';

beforeAll(async () => {
  dashboard = await startTestDashboard('revenue-breakdown-routes', 'rb');
  ({ warehouse, app, key, shareWithout, shareWith } = dashboard);
  const example = workedExample('rbr');
  const row = (data: (typeof example)[number], n: number) => ({
    project_id: 'rb',
    transaction_id: data.transaction_id,
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    timestamp: data.timestamp,
    received_at: Date.parse('2026-06-01T00:00:00Z') + n,
    client_timestamp: data.timestamp,
    timestamp_clamped: false,
    customer_id: data.customer_id,
    visitor_id: '',
    session_id: '',
    event_type: data.event_type ?? '',
    amount: String(data.amount),
    currency: 'USD',
    mrr_impact: typeof data.mrr_impact === 'number' ? String(data.mrr_impact) : null,
    is_recurring: data.is_recurring ?? null,
    customer_subscription_id: '',
    payment_processor: data.customer_id === 'C' ? 'paddle' : 'stripe',
    metadata: Object.fromEntries(Object.entries(data.metadata ?? {}).map(([k, v]) => [k, String(v)])),
    payload: JSON.stringify(data),
    user_agent: '',
  });
  // Newest first, and the whole history a second time (redelivered).
  const rows = [...example].reverse().map((data, i) => row(data, i + 1));
  await warehouse.insert('revenue', rows);
  await warehouse.insert(
    'revenue',
    rows.map((r, i) => ({ ...r, received_at: Number(r.received_at) + 100 + i })),
  );
}, 60_000);

afterAll(() => dashboard?.close());

async function get(path: string, token = key) {
  const res = await app.inject({ url: `${BASE}${path}`, headers: { authorization: `Bearer ${token}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const sum = (values: string[]) => formatMicros(values.reduce((s, v) => s + toMicros(v), 0n));
const MONEY = ['new', 'expansion', 'reactivation', 'contraction', 'churn', 'mrr_end', 'cash_revenue'];

describe('revenue breakdown, filters and metadata search routes', () => {
  it('breaks MRR down by plan into rows that add up to the MRR report, with the metadata keys', async () => {
    const body = await get('/breakdown?from=2026-01&to=2026-04&by=plan');
    expect(body.rows.map((r: { key: string; mrr_end: string }) => [r.key, r.mrr_end])).toEqual([
      ['business', '150'],
      ['pro', '100'],
      ['starter', '40'],
      ['lifetime', '0'],
    ]);
    expect(body.metadata_keys).toEqual(['interval', 'plan']);
    const months = await get('/mrr?from=2026-01&to=2026-04');
    for (const column of MONEY) {
      expect(sum(body.rows.map((r: Record<string, string>) => r[column])), column).toBe(body.total[column]);
      if (column !== 'mrr_end')
        expect(sum(months.map((m: Record<string, string>) => m[column])), column).toBe(body.total[column]);
    }
    expect(body.total.mrr_end).toBe(months.at(-1).mrr_end);
    const interval = await get('/breakdown?from=2026-01&to=2026-04&by=metadata.interval');
    expect(interval.rows.map((r: { key: string }) => r.key)).toEqual(['(none)', 'annual']);
    const csv = await app.inject({
      url: `${BASE}/breakdown?from=2026-01&to=2026-04&by=payment_processor&format=csv`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(csv.body.split('\r\n')[0]).toBe(
      'key,customers,paying_customers,new,expansion,reactivation,contraction,churn,mrr_end,cash_revenue',
    );
    expect(csv.body).toContain('paddle,1,1,100,');
  });

  it('narrows the MRR report, attribution, drill-down and customers to the customers a filter keeps', async () => {
    const all = await get('/mrr?from=2026-01&to=2026-04');
    const parts = await Promise.all(
      ['pro', 'business', 'starter', 'lifetime'].map((plan) =>
        get(`/mrr?from=2026-01&to=2026-04&filters=${encodeURIComponent(`plan==${plan}`)}`),
      ),
    );
    for (const column of [...MONEY, 'mrr_start']) {
      all.forEach((month: Record<string, string>, i: number) => {
        expect(sum(parts.map((p) => (p[i] as Record<string, string>)[column] ?? '0')), column).toBe(
          month[column],
        );
      });
    }
    const starter = `filters=${encodeURIComponent('plan==starter')}`;
    const attribution = await get(`/attribution?from=2026-01&to=2026-04&${starter}`);
    expect(attribution.total).toMatchObject({ customers: 1, mrr_end: '40', cash_revenue: '120' });
    const drill = await get(`/records?figure=cash_revenue&from=2026-01&to=2026-04&${starter}`);
    expect(new Set(drill.items.map((i: { customer_id: string }) => i.customer_id))).toEqual(new Set(['B']));
    const customers = await get(`/customers?filters=${encodeURIComponent('payment_processor==paddle')}`);
    expect(customers.customers.map((c: { customer_id: string }) => c.customer_id)).toEqual(['C']);
    const none = await get(
      `/breakdown?from=2026-01&to=2026-04&by=plan&filters=${encodeURIComponent('interval!=annual')}`,
    );
    expect(none.total.customers).toBe(3);
  });

  it('searches records by metadata as `tally revenue search` does, and hides it from a share link without revenue', async () => {
    const found = await get('/search?key=plan&value=starter');
    expect(found.records.map((r: { transaction_id: string }) => r.transaction_id)).toEqual([
      'rbr_tx_4',
      'rbr_tx_8',
    ]);
    expect(found.records[0].data).toMatchObject({ customer_id: 'B', metadata: { plan: 'starter' } });
    expect((await get('/search?key=plan&value=nothing')).records).toEqual([]);
    for (const path of ['/search?key=plan&value=pro', '/breakdown?from=2026-01&to=2026-04&by=plan']) {
      const hidden = await app.inject({
        url: `${BASE}${path}`,
        headers: { authorization: `Bearer ${shareWithout}` },
      });
      expect(hidden.statusCode).toBe(403);
      await get(path, shareWith);
    }
  });
});
