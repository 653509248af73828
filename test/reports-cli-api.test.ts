// Every report through both front ends, on the same landed records: `tally report <path> --json` with the
// API's query parameters as flags prints exactly what GET /api/v1/projects/{project}/<path> answers, filters
// included, through `npm start`'s process (the CLI reaches its warehouse through the published endpoint and
// reads the project's time zone from the same state store). The project counts its days in New York, where
// 2026-05-05 02:00 UTC is still 4 May: the traffic figures are the zoned days', as the dashboard's.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workedExample } from '@tally/reports/testing';
import { LmdbStateStore, ProjectStore } from '@tally/state-store';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const PROJECT = 'reads';
const TIME_ZONE = 'America/New_York';

/** A pageview of a visitor (its fingerprint) at an instant, from a referrer. */
const pageview = (fingerprint: string, at: string, path: string, extra: Record<string, unknown> = {}) => ({
  type: 'pageview',
  data: {
    visitor_fingerprint: fingerprint,
    session_id: `s_${fingerprint}_${at}`,
    url: `https://shop.example${path}`,
    timestamp: Date.parse(at),
    ...extra,
  },
});

describe('tally report --json prints what the read API answers, for every report', () => {
  let dataDir: string;
  let running: TallyProcess;
  let dashboard: string;
  let readKey: string;
  const env = () => pipelineEnv({ TALLY_DATA_DIR: dataDir });

  const api = async (path: string, query: Record<string, string>): Promise<unknown> => {
    const url = `${dashboard}/api/v1/projects/${PROJECT}/${path}?${new URLSearchParams(query)}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${readKey}` } });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return res.json();
  };
  const cli = async (path: string, query: Record<string, string>): Promise<unknown> => {
    const flags = Object.entries(query).flatMap(([name, value]) => [`--${name}`, value]);
    return JSON.parse(await tally(['report', path, '--project', PROJECT, ...flags, '--json'], env()));
  };
  /** The API's body of a report and the CLI's, which must be equal; the API's is returned. */
  const both = async (path: string, query: Record<string, string>): Promise<unknown> => {
    const [fromApi, fromCli] = [await api(path, query), await cli(path, query)];
    expect(fromCli, `tally report ${path} ${JSON.stringify(query)}`).toEqual(fromApi);
    return fromApi;
  };

  beforeAll(async () => {
    dataDir = tempDataDir();
    const tokens = new FileTokenStore(dataDir);
    const secret = (await tokens.create(PROJECT, 'secret')).token;
    const publicToken = (await tokens.create(PROJECT, 'public')).token;
    readKey = (await tokens.create(PROJECT, 'read')).token;
    await tokens.close();
    // The project's days are New York's, as the dashboard's settings keep them.
    const store = new LmdbStateStore(dataDir);
    await new ProjectStore(store).updateSettings(PROJECT, { time_zone: TIME_ZONE });
    await store.close();
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    dashboard = running.endpoints.dashboardUrl as string;

    const google = { referrer: 'https://www.google.com/' };
    const traffic = [
      // The customers' first visits (their touches): A from Google, B from a newsletter, C direct.
      pageview('fp_A', '2025-12-20T10:00:00Z', '/', google),
      pageview('fp_B', '2025-12-22T10:00:00Z', '/pricing', {
        utm_source: 'newsletter',
        utm_medium: 'email',
        utm_campaign: 'winter',
      }),
      pageview('fp_C', '2026-02-01T10:00:00Z', '/'),
      // 4 May in New York (08:00), and on 4 May in New York (22:00) though 5 May in UTC, then 5 May.
      pageview('fp_x', '2026-05-04T12:00:00Z', '/'),
      pageview('fp_y', '2026-05-05T02:00:00Z', '/pricing', google),
      pageview('fp_z', '2026-05-05T15:00:00Z', '/blog/launch', google),
      pageview('fp_z', '2026-05-05T15:00:30Z', '/pricing', { session_id: 's_fp_z_2026-05-05T15:00:00Z' }),
      {
        type: 'event',
        data: {
          visitor_fingerprint: 'fp_z',
          session_id: 's_fp_z_2026-05-05T15:00:00Z',
          event_name: 'signup',
          event_data: { plan: 'pro' },
          timestamp: Date.parse('2026-05-05T15:01:00Z'),
        },
      },
      {
        type: 'identify',
        data: {
          visitor_fingerprint: 'fp_A',
          session_id: 's_fp_A_2025-12-20T10:00:00Z',
          customer_id: 'A',
          timestamp: Date.parse('2025-12-20T10:05:00Z'),
        },
      },
    ];
    for (const record of traffic) {
      const res = await send(running.url, publicToken, { ...record, id: randomUUID() });
      expect(res.status, await res.clone().text()).toBe(202);
    }
    for (const data of workedExample('rr')) {
      const res = await send(running.url, secret, { type: 'revenue', id: randomUUID(), data });
      expect(res.status, await res.clone().text()).toBe(202);
    }
    // Every record acknowledged is in the log; once both groups have committed all of them, every table
    // (visits, mrr_movements included) is final, so the API and the CLI read the same rows.
    const topics = ['pageview', 'event', 'identify', 'revenue'];
    await eventually(90_000, 'both consumer groups committing every record', async () => {
      const groups = JSON.parse(await tally(['log', 'groups', '--json'], env())) as Array<{
        topic: string;
        lag: number;
      }>;
      return topics.every((t) => groups.some((g) => g.topic === t)) && groups.every((g) => g.lag === 0);
    });
  });

  afterAll(async () => {
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  it('traffic/summary: the days of the project’s time zone, with and without filters', async () => {
    const day = { from: '2026-05-05', to: '2026-05-05' };
    const summary = (await both('traffic/summary', day)) as Record<string, unknown>;
    // 5 May in New York: fp_z's two pageviews and event; fp_y's pageview (02:00 UTC) is 4 May's.
    expect(summary).toMatchObject({ time_zone: TIME_ZONE, pageviews: 2, visitors: 1, visits: 1, events: 1 });
    expect(summary.previous).toMatchObject({ from: '2026-05-04', pageviews: 2, visitors: 2 });
    const filtered = (await both('traffic/summary', {
      from: '2026-05-04',
      to: '2026-05-05',
      filters: 'page==/pricing',
      compare: 'year',
    })) as Record<string, unknown>;
    expect(filtered).toMatchObject({ pageviews: 3, visitors: 2, visits: 2 });
  });

  it('traffic is traffic/summary: one definition of a visit, in the CLI as in the dashboard', async () => {
    const range = { from: '2026-05-04', to: '2026-05-05' };
    const summary = JSON.parse(
      await tally(
        ['report', 'traffic', '--project', PROJECT, '--from', range.from, '--to', range.to, '--json'],
        env(),
      ),
    );
    expect(summary).toEqual(await api('traffic/summary', range));
    expect(summary).toHaveProperty('visits');
    expect(summary).not.toHaveProperty('sessions');
  });

  it('traffic/overview, the terminal’s overview: its days are the project’s too, its visits the dashboard’s', async () => {
    const range = { from: '2026-05-04', to: '2026-05-05' };
    const overview = JSON.parse(
      await tally(
        [
          'report',
          'traffic/overview',
          '--project',
          PROJECT,
          '--from',
          range.from,
          '--to',
          range.to,
          '--json',
        ],
        env(),
      ),
    );
    const summary = (await api('traffic/summary', range)) as { pageviews: number; visits: number };
    expect(overview).toMatchObject({
      time_zone: TIME_ZONE,
      pageviews: summary.pageviews,
      visits: summary.visits,
    });
    // fp_y's pageview at 02:00 UTC on 5 May is New York's 4 May.
    expect(overview.days).toEqual([
      { day: '2026-05-04', pageviews: 2, visitors: 2, sessions: 2, events: 0 },
      { day: '2026-05-05', pageviews: 2, visitors: 1, sessions: 1, events: 1 },
    ]);
  });

  it('lays each report out as a table without --json, with the same figures', async () => {
    const text = (path: string, ...flags: string[]) =>
      tally(['report', path, '--project', PROJECT, ...flags], env());
    const summary = await text('traffic/summary', '--from', '2026-05-05', '--to', '2026-05-05');
    expect(summary).toContain(`Days in ${TIME_ZONE}`);
    expect(summary).toMatch(/current 2026-05-05 to 2026-05-05\s+1\s+1\s+2/);
    const pages = await text('traffic/breakdown/page', '--from', '2026-05-04', '--to', '2026-05-05');
    expect(pages).toMatch(/2\s+\S+%\s+\/pricing/);
    const series = await text('traffic/timeseries', '--from', '2026-05-04', '--to', '2026-05-05');
    expect(series).toMatch(/2026-05-05\s+1\s+1\s+2/);
    const customers = await text('revenue/customers', '--filters', 'plan==business|pro');
    expect(customers).toContain('2 customers (USD)');
    expect(customers).toMatch(/\bA\b/);
  });

  it('traffic/timeseries: a point per zoned day, filtered', async () => {
    const series = (await both('traffic/timeseries', {
      from: '2026-05-03',
      to: '2026-05-06',
      filters: 'source==Google',
    })) as { points: Array<{ date: string; pageviews: number }> };
    expect(series.points.map((p) => [p.date, p.pageviews])).toEqual([
      ['2026-05-03', 0],
      ['2026-05-04', 1],
      ['2026-05-05', 2],
      ['2026-05-06', 0],
    ]);
    await both('traffic/timeseries', {
      from: '2026-04-01',
      to: '2026-05-31',
      interval: 'week',
      compare: 'none',
    });
  });

  it('traffic/breakdown/<dimension>: page, source, channel and event_property, filtered, sorted and limited', async () => {
    const pages = (await both('traffic/breakdown/page', { from: '2026-05-04', to: '2026-05-05' })) as {
      rows: Array<{ value: string }>;
    };
    expect(pages.rows.map((r) => r.value)).toEqual(['/pricing', '/', '/blog/launch']);
    await both('traffic/breakdown/source', {
      from: '2025-12-01',
      to: '2026-05-31',
      filters: 'page!=/blog/*',
      limit: '2',
      sort: 'visits',
      order: 'asc',
    });
    await both('traffic/breakdown/channel', { from: '2025-12-01', to: '2026-05-31' });
    await both('traffic/breakdown/event_property', {
      from: '2026-05-01',
      to: '2026-05-31',
      property: 'plan',
    });
  });

  it('revenue/mrr: the filter keeps only the customers it matches, in the CLI as in the API', async () => {
    const months = { from: '2026-01', to: '2026-04' };
    const all = await both('revenue/mrr', months);
    const pro = (await both('revenue/mrr', { ...months, filters: 'plan==business|pro' })) as Array<{
      month: string;
      mrr_end: string;
    }>;
    expect(pro).not.toEqual(all);
    // A (business) and C (pro) only: B's basic and starter months are left out.
    expect(pro.map((m) => [m.month, m.mrr_end])).toEqual([
      ['2026-01', '100'],
      ['2026-02', '250'],
      ['2026-03', '250'],
      ['2026-04', '250'],
    ]);
    // The short name is the same report.
    const short = JSON.parse(
      await tally(
        [
          'report',
          'mrr',
          '--project',
          PROJECT,
          '--from',
          '2026-01',
          '--to',
          '2026-04',
          '--filters',
          'plan==business|pro',
          '--json',
        ],
        env(),
      ),
    );
    expect(short).toEqual(pro);
  });

  it('revenue/mrr/daily', async () => {
    await both('revenue/mrr/daily', { from: '2026-02-15', to: '2026-03-15', currency: 'usd' });
  });

  it('revenue/attribution: the filter applies, by first and last touch', async () => {
    const months = { from: '2026-01', to: '2026-04' };
    const all = await both('revenue/attribution', months);
    const filtered = await both('revenue/attribution', {
      ...months,
      filters: 'plan==business|pro',
      by: 'source',
    });
    expect(filtered).not.toEqual(await api('revenue/attribution', { ...months, by: 'source' }));
    await both('revenue/attribution', { ...months, touch: 'last', by: 'utm_campaign' });
    expect(all).toMatchObject({ by: 'channel', touch: 'first' });
  });

  it('revenue/breakdown, revenue/reconciliation and revenue/records (the drill-down)', async () => {
    const months = { from: '2026-01', to: '2026-04' };
    await both('revenue/breakdown', { ...months, by: 'plan', filters: 'plan!=lifetime' });
    await both('revenue/breakdown', { ...months, by: 'metadata.interval' });
    const reconciliation = (await both('revenue/reconciliation', { month: '2026-02' })) as {
      errors: string[];
    };
    expect(reconciliation.errors).toEqual([]);
    await both('revenue/records', { ...months, figure: 'new', filters: 'plan==pro' });
    await both('revenue/records', {
      ...months,
      figure: 'mrr_end',
      key: 'Organic Search',
      offset: '0',
      limit: '5',
    });
  });

  it('revenue/funnel, revenue/customers and revenue/customers/<customer_id>', async () => {
    await both('revenue/funnel', { from: '2025-12-01', to: '2026-05-31', by: 'source' });
    const customers = (await both('revenue/customers', { filters: 'plan==business|pro', limit: '1' })) as {
      total: number;
      customers: unknown[];
    };
    expect([customers.total, customers.customers.length]).toEqual([2, 1]);
    await both('revenue/customers', { offset: '1' });
    await both('revenue/customers/A', {});
  });

  it('revenue/customers searched, kept by status and sorted: the same in the CLI as in the API', async () => {
    const ids = async (query: Record<string, string>) =>
      ((await both('revenue/customers', query)) as { customers: { customer_id: string }[] }).customers.map(
        (c) => c.customer_id,
      );
    // The worked example: MRR now A 150, C 100, B 40, D 0 (one-off); cash C 1,200, D 500, A 300, B 120;
    // first seen A (20 Dec, its visit), B (22 Dec), C (1 Feb), D (10 Apr).
    expect(await ids({})).toEqual(['A', 'C', 'B', 'D']);
    expect(await ids({ sort: 'cash' })).toEqual(['C', 'D', 'A', 'B']);
    expect(await ids({ sort: 'cash', order: 'asc' })).toEqual(['B', 'A', 'D', 'C']);
    expect(await ids({ sort: 'first_seen' })).toEqual(['A', 'B', 'C', 'D']);
    expect(await ids({ sort: 'customer_id', order: 'desc' })).toEqual(['D', 'C', 'B', 'A']);
    expect(await ids({ status: 'one_off' })).toEqual(['D']);
    expect(await ids({ status: 'active', sort: 'mrr', order: 'asc' })).toEqual(['B', 'C', 'A']);
    expect(await ids({ search: 'c' })).toEqual(['C']);
    expect(await ids({ search: 'zz' })).toEqual([]);
  });

  it("revenue/funnel converted: MRR now at the latest rate, cash at each payment month's, as the CLI prints", async () => {
    const range = { from: '2025-12-01', to: '2026-05-31', by: 'source' };
    // No rates yet: a 400 that says so.
    const refused = await fetch(
      `${dashboard}/api/v1/projects/${PROJECT}/revenue/funnel?${new URLSearchParams({ ...range, convert_to: 'EUR' })}`,
      { headers: { authorization: `Bearer ${readKey}` } },
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/no exchange rates to this currency are loaded/);
    // Every payment month at 0.5, the latest loaded month (June) at 0.8: MRR now × 0.8, cash × 0.5.
    const file = join(dataDir, 'funnel-rates.csv');
    writeFileSync(
      file,
      `month,currency,rate_to_EUR\n${['2025-12', '2026-01', '2026-02', '2026-03', '2026-04', '2026-05']
        .map((m) => `${m},USD,0.5`)
        .join('\n')}\n2026-06,USD,0.8\n`,
    );
    await tally(['revenue', 'rates', 'load', file], env());
    type Funnel = {
      currency: string;
      converted_to?: string;
      missing_currencies?: string[];
      rates?: Array<{ currency: string; period: string; rate: string }>;
      rows: Array<{ key: string; visitors: number; mrr: string; cash_revenue: string }>;
      total: { paying_customers: number; mrr: string; cash_revenue: string };
    };
    const usd = (await both('revenue/funnel', range)) as Funnel;
    const eur = (await both('revenue/funnel', { ...range, convert_to: 'EUR' })) as Funnel;
    expect(eur).toMatchObject({ currency: 'EUR', converted_to: 'EUR', missing_currencies: [] });
    expect(eur.rates?.find((r) => r.period === '2026-06')).toEqual({
      currency: 'USD',
      period: '2026-06',
      rate: '0.8',
    });
    const times = (amount: string, rate: number) => String(Math.round(Number(amount) * rate * 1e6) / 1e6);
    expect(Number(usd.total.mrr)).toBeGreaterThan(0);
    expect(Number(usd.total.cash_revenue)).toBeGreaterThan(0);
    expect(eur.total).toMatchObject({
      paying_customers: usd.total.paying_customers,
      mrr: times(usd.total.mrr, 0.8),
      cash_revenue: times(usd.total.cash_revenue, 0.5),
    });
    expect(eur.rows.map((r) => [r.key, r.visitors, r.mrr, r.cash_revenue])).toEqual(
      usd.rows.map((r) => [r.key, r.visitors, times(r.mrr, 0.8), times(r.cash_revenue, 0.5)]),
    );
  });

  it("revenue/currencies: the project's currencies with their records and customers", async () => {
    // The worked example: nine records of four customers (A, B, C, D), all in USD.
    expect(await both('revenue/currencies', {})).toEqual({
      currencies: [{ currency: 'USD', records: 9, customers: 4 }],
    });
  });
});
