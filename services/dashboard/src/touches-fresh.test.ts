// The attribution panels see new visits and identifies on the very next request (inject, real chDB): the
// attribution route is asked once so that the customers' touches are cached (@tally/reports
// revenue/touches-cache.ts), then a visit, an anonymous visitor's visit and an identify land in the
// warehouse, and the next request, without waiting or retrying, groups the customer by its new first touch
// (or, for the anonymous visit, as before).

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
  dashboard = await startTestDashboard('touches-fresh', 'touches');
  ({ warehouse, app, key } = dashboard);
}, 60_000);

afterAll(() => dashboard?.close());

const PROJECT = 'touches';
const at = (day: string) => `${day} 12:00:00.000`;

async function visit(visitor: string, day: string, channel: string, campaign = ''): Promise<void> {
  sequence += 1;
  await warehouse.insert('visits', [
    {
      project_id: PROJECT,
      visitor_id: visitor,
      start: at(day),
      end: at(day),
      pageviews: 1,
      events: 0,
      is_bounce: true,
      duration_ms: 0,
      entry_path: '/pricing',
      exit_path: '/pricing',
      hostname: 'shop.example',
      source: '',
      referrer: '',
      channel,
      utm_source: '',
      utm_medium: '',
      utm_campaign: campaign,
      utm_term: '',
      utm_content: '',
      country: 'DE',
      browser: 'Safari',
      os: 'macOS',
      device_type: 'desktop',
      screen_size: '',
      pageview_ids: [`pv${sequence}`],
      pageview_times: [at(day)],
      pageview_paths: ['/pricing'],
      event_ids: [],
      event_times: [],
      event_names: [],
      event_data: [],
      version: sequence,
      is_deleted: 0,
    },
  ]);
}

async function identify(visitor: string, customer: string, day: string): Promise<void> {
  sequence += 1;
  await warehouse.insert('identities', [
    {
      project_id: PROJECT,
      id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
      timestamp: at(day),
      received_at: at(day),
      visitor_id: visitor,
      visitor_id_derived: false,
      session_id: '',
      customer_id: customer,
      user_agent: '',
      extra: '',
    },
  ]);
}

async function subscribe(customer: string, day: string, amount: string): Promise<void> {
  sequence += 1;
  await warehouse.insert('revenue', [
    revenueRow({
      project_id: PROJECT,
      transaction_id: `t${sequence}`,
      id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
      customer_id: customer,
      event_type: 'subscription',
      amount,
      mrr_impact: amount,
      timestamp: at(day),
      received_at: at(day),
    }),
  ]);
}

const get = async (path: string) => {
  const res = await app.inject({
    url: `/api/v1/projects/${PROJECT}/revenue/${path}`,
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.statusCode, path).toBe(200);
  return res.json();
};

/** Each group's MRR at the end of March, by channel of the first touch and by campaign of the last. */
async function groups() {
  const rows = async (query: string) =>
    (
      (await get(`attribution?from=2026-01&to=2026-03&currency=USD&${query}`)).rows as Array<{
        key: string;
        mrr_end: string;
      }>
    )
      .map((r) => [r.key, r.mrr_end])
      .sort();
  const drilldown = await get(
    'records?figure=new&from=2026-01&to=2026-03&currency=USD&by=channel&touch=first&key=Social',
  );
  return {
    first: await rows('by=channel&touch=first'),
    last: await rows('by=utm_campaign&touch=last'),
    social: drilldown.items.map((i: { customer_id: string }) => i.customer_id),
  };
}

describe('attribution after new visits and identifies', () => {
  it('groups customers by their new touches on the next request', async () => {
    await visit('v1', '2026-01-10', 'Email', 'spring');
    await identify('v1', 'ann', '2026-01-10');
    await subscribe('ann', '2026-01-20', '10');
    await subscribe('bo', '2026-01-21', '20');
    expect(await groups()).toEqual({
      first: [
        ['(unattributed)', '20'],
        ['Email', '10'],
      ],
      last: [
        ['(unattributed)', '20'],
        ['spring', '10'],
      ],
      social: [],
    });

    // An earlier visit of ann's visitor: her first touch, and (before her payment) not her last.
    await visit('v1', '2026-01-02', 'Organic Search');
    const earlier = await groups();
    expect(earlier.first).toEqual([
      ['(unattributed)', '20'],
      ['Organic Search', '10'],
    ]);
    expect(earlier.last).toEqual([
      ['(unattributed)', '20'],
      ['spring', '10'],
    ]);

    // An anonymous visitor's visit changes nothing; once bo is identified on it, it is bo's touch.
    await visit('v2', '2026-01-05', 'Social', 'launch');
    expect(await groups()).toEqual(earlier);
    await identify('v2', 'bo', '2026-01-21');
    expect(await groups()).toEqual({
      first: [
        ['Organic Search', '10'],
        ['Social', '20'],
      ],
      last: [
        ['launch', '20'],
        ['spring', '10'],
      ],
      social: ['bo'],
    });

    // ann's visitor identified again as bo: ann has no visit any more, bo's first touch is v1's.
    await identify('v1', 'bo', '2026-02-01');
    expect((await groups()).first).toEqual([
      ['(unattributed)', '10'],
      ['Organic Search', '20'],
    ]);
  });
});
