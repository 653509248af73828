// The daily MRR route and the converted MRR reports through the dashboard (inject, real chDB, LMDB store):
// the daily figures end each month on the monthly report's mrr_end and add up to its movements; bad days,
// ranges and currencies are 400s; convert_to without loaded rates is a 400 that says so, and with rates the
// answer is marked converted, lists its rates and the currencies left out; share links show it only when
// they include revenue; CSV answers.
import { formatMicros, toMicros } from '@tally/contract';
import { loadExchangeRates, parseExchangeRatesCsv } from '@tally/reports/revenue';
import { ProjectStore } from '@tally/state-store';
import type { Warehouse } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

const P = '/api/v1/projects/daily';
let warehouse: Warehouse;
let app: FastifyInstance;
let dashboard: TestDashboard;
let key: string;
let shareWithout: string;
let shareWith: string;

/** Revenue records of project `daily`, stored as the revenue consumer stores them. */
const HISTORY: Array<[string, string, string, string, string | null, string]> = [
  // [transaction, customer, event_type, amount, mrr_impact, currency+timestamp]
  ['t1', 'A', 'subscription', '49.99', '49.99', 'USD 2026-01-03 09:00:00'],
  ['t2', 'B', 'subscription', '20.005', '20.005', 'GBP 2026-01-20 23:59:59'],
  ['t3', 'A', 'upgrade', '10', '10', 'USD 2026-02-01 00:00:00'],
  ['t4', 'C', 'subscription', '30', '30', 'USD 2026-02-14 12:00:00'],
  ['t5', 'C', 'churn', '0', null, 'USD 2026-03-02 08:00:00'],
  ['t6', 'A', 'refund', '-5.5', null, 'USD 2026-03-10 08:00:00'],
];

beforeAll(async () => {
  dashboard = await startTestDashboard('revenue-daily', 'daily');
  ({ warehouse, app, key, shareWithout, shareWith } = dashboard);
  await warehouse.insert(
    'revenue',
    HISTORY.map(([transaction_id, customer_id, event_type, amount, mrr_impact, at], i) => ({
      project_id: 'daily',
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      transaction_id,
      customer_id,
      event_type,
      amount,
      mrr_impact,
      currency: at.slice(0, 3),
      timestamp: `${at.slice(4)}.000`,
      received_at: `2026-04-01 00:00:0${i}.000`,
      is_recurring: event_type === 'subscription',
      customer_subscription_id: '',
      visitor_id: '',
      session_id: '',
      payment_processor: 'stripe',
      timestamp_clamped: false,
      metadata: {},
      payload: '{}',
      user_agent: '',
    })),
  );
}, 60_000);
afterAll(() => dashboard?.close());

const get = (url: string, token = key, headers: Record<string, string> = {}) =>
  app.inject({ url: `${P}/${url}`, headers: { authorization: `Bearer ${token}`, ...headers } });

type Row = Record<string, unknown>;

describe('GET …/revenue/mrr/daily', () => {
  it('ends each month on the monthly mrr_end and adds up to its movements, per currency', async () => {
    const monthly = (await get('revenue/mrr?from=2026-01&to=2026-03')).json() as Row[];
    const res = await get('revenue/mrr/daily?from=2026-01-01&to=2026-03-31');
    expect(res.statusCode, res.body).toBe(200);
    const daily = res.json() as Row[];
    expect(daily).toHaveLength(90 * 2); // GBP and USD, every day
    expect(monthly).toHaveLength(3 * 2);
    for (const month of monthly) {
      const days = daily.filter(
        (d) => d.currency === month.currency && String(d.date).startsWith(String(month.month)),
      );
      expect(days.at(-1)?.mrr, `${month.month} ${month.currency}`).toBe(month.mrr_end);
      expect(days.at(-1)?.paying_customers).toBe(month.customers_end);
      for (const field of [
        'new',
        'expansion',
        'reactivation',
        'contraction',
        'churn',
        'net_new',
        'cash_revenue',
      ]) {
        const sum = days.reduce((s, d) => s + toMicros(String(d[field])), 0n);
        expect(formatMicros(sum), `${month.month} ${month.currency} ${field}`).toBe(month[field]);
      }
    }
    // The upgrade at midnight on 1 February is February's, and its day's.
    expect(daily.find((d) => d.date === '2026-02-01' && d.currency === 'USD')).toMatchObject({
      mrr: '59.99',
      arr: '719.88',
      expansion: '10',
      paying_customers: 1,
    });
    expect(daily.find((d) => d.date === '2026-01-20' && d.currency === 'GBP')).toMatchObject({
      new: '20.005',
    });
  });

  it('gives one currency when asked, all zero days included', async () => {
    const res = await get('revenue/mrr/daily?from=2026-01-01&to=2026-01-02&currency=eur');
    expect(res.json()).toEqual([
      expect.objectContaining({ date: '2026-01-01', currency: 'EUR', mrr: '0', paying_customers: 0 }),
      expect.objectContaining({ date: '2026-01-02', currency: 'EUR', mrr: '0' }),
    ]);
  });

  it.each([
    ['from=2026-02-30&to=2026-03-01', 'from must be a day YYYY-MM-DD'],
    ['from=2026-03-02&to=2026-03-01', 'from must not be after to'],
    ['from=2025-01-01&to=2026-01-02', 'a daily revenue range covers at most 366 days'],
  ])('refuses %s with 400', async (query, message) => {
    const res = await get(`revenue/mrr/daily?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message });
  });

  it.each([
    'from=2026-01&to=2026-02',
    'from=2026-01-01',
    'from=2026-01-01&to=2026-01-02&currency=EURO',
    'from=2026-01-01&to=2026-01-02&convert_to=1',
  ])('refuses a malformed query %s with 400', async (query) => {
    expect((await get(`revenue/mrr/daily?${query}`)).statusCode).toBe(400);
  });

  it('is shown on a share link only when it includes revenue', async () => {
    const url = 'revenue/mrr/daily?from=2026-01-01&to=2026-01-31';
    expect((await get(url, shareWithout)).statusCode).toBe(403);
    expect((await get(url, shareWith)).statusCode).toBe(200);
    expect((await app.inject({ url: `${P}/${url}` })).statusCode).toBe(401);
  });

  it('answers CSV, with the notes of each day and month (UTC) in an annotation column', async () => {
    const projects = new ProjectStore(dashboard.store);
    await projects.addAnnotation('daily', {
      date: '2026-01-02',
      text: 'pricing page live',
      created_by: 'cli',
    });
    // 23:30 in New York on 2 January is 3 January in UTC, where revenue days are counted.
    await projects.addAnnotation('daily', {
      date: '2026-01-02T23:30:00-05:00',
      text: 'launch',
      created_by: 'cli',
    });
    await projects.addAnnotation('daily', { date: '2026-02-14', text: 'price change', created_by: 'cli' });
    const res = await get('revenue/mrr/daily?from=2026-01-01&to=2026-01-03&currency=USD&format=csv');
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.body.split('\r\n').slice(0, 4)).toEqual([
      'date,currency,mrr,arr,paying_customers,new,expansion,reactivation,contraction,churn,net_new,cash_revenue,annotation',
      '2026-01-01,USD,0,0,0,0,0,0,0,0,0,0,',
      '2026-01-02,USD,0,0,0,0,0,0,0,0,0,0,pricing page live',
      '2026-01-03,USD,49.99,599.88,1,49.99,0,0,0,0,49.99,49.99,launch',
    ]);
    const monthly = await get('revenue/mrr?from=2026-01&to=2026-02&currency=USD&format=csv');
    const lines = monthly.body.split('\r\n');
    expect(lines[0]?.split(',').at(-1)).toBe('annotation');
    expect(lines.slice(1, 3).map((l) => l.split(',').at(-1))).toEqual([
      'pricing page live; launch',
      'price change',
    ]);
  });
});

describe('convert_to', () => {
  it('is a 400 saying so when no rates to that currency are loaded', async () => {
    for (const url of [
      'revenue/mrr?from=2026-01&to=2026-02&convert_to=CHF',
      'revenue/mrr/daily?from=2026-01-01&to=2026-01-02&convert_to=CHF',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message).toMatch(/^no exchange rates to this currency are loaded/);
    }
    expect((await get('revenue/exchange-rates')).json()).toMatchObject({ bases: [] });
  });

  it('converts with the loaded rates, marked, with the rates used and the currencies left out', async () => {
    await loadExchangeRates(
      warehouse,
      parseExchangeRatesCsv(
        'month,currency,rate_to_EUR\n2026-01,USD,0.9\n2026-01,GBP,1.17\n2026-02,USD,0.9215\n',
      ),
    );
    const rates = (await get('revenue/exchange-rates', shareWith)).json();
    expect(rates.bases).toEqual(['EUR']);
    expect(rates.rates).toHaveLength(3);
    const res = await get('revenue/mrr?from=2026-01&to=2026-02&convert_to=eur');
    expect(res.statusCode, res.body).toBe(200);
    const [january, february] = res.json() as Row[];
    // 49.99 × 0.9 + 20.005 × 1.17 = 44.991 + 23.40585.
    expect(january).toMatchObject({
      month: '2026-01',
      currency: 'EUR',
      converted_to: 'EUR',
      mrr_end: '68.39685',
      new: '68.39685',
      missing_currencies: [],
      rates: [
        { currency: 'GBP', period: '2026-01', rate: '1.17' },
        { currency: 'USD', period: '2026-01', rate: '0.9' },
      ],
    });
    // February: (49.99 + 10 + 30) × 0.9215 = 82.925785; GBP has no February rate: left out, listed.
    expect(february).toMatchObject({
      month: '2026-02',
      mrr_end: '82.925785',
      missing_currencies: ['GBP'],
      rates: [{ currency: 'USD', period: '2026-02', rate: '0.9215' }],
    });
    const days = (
      await get('revenue/mrr/daily?from=2026-01-31&to=2026-02-01&convert_to=EUR')
    ).json() as Row[];
    expect(days.map((d) => [d.date, d.mrr, d.converted_to, d.missing_currencies])).toEqual([
      ['2026-01-31', '68.39685', 'EUR', []],
      ['2026-02-01', '55.280785', 'EUR', ['GBP']], // 59.99 × 0.9215
    ]);
    const csv = await get('revenue/mrr?from=2026-01&to=2026-01&convert_to=EUR&format=csv');
    // The converted month's counts (2 paying at the end), rates and ARPA (68.39685 / 2) come with it.
    expect(csv.body.split('\r\n')[0]).toContain(
      'converted_to,customers_start,customers_end,churned_customers,gross_revenue_churn_rate',
    );
    expect(csv.body.split('\r\n')[1]).toBe(
      // Its last cell: the month's notes (added by the CSV test above).
      '2026-01,EUR,0,68.39685,0,0,0,0,68.39685,68.39685,68.39685,EUR,0,2,0,,,,34.198425,,GBP 2026-01 1.17; USD 2026-01 0.9,,pricing page live; launch',
    );
  });
});
