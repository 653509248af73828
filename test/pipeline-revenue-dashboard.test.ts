// The revenue views of the dashboard (issue 11) through the whole pipeline as `npm start` runs it: the
// worked examples of docs/revenue.md and docs/traffic.md sent to /api/ingest (out of order, partly twice),
// landed by the real consumers, read through the dashboard's API with a read key and with the tally CLI
// (attribution, breakdown, reconciliation): exactly the specs' figures, breakdowns that add up to the unbroken totals,
// drill-downs that add up to their figure, a customer's page, and the project's ingestion health.
import { randomUUID } from 'node:crypto';
import { type RevenueData, toMicros } from '@tally/contract';
import { WORKED_EXAMPLE_COHORTS, workedExample } from '@tally/reports/testing';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const MONEY_FIELDS = ['new', 'expansion', 'reactivation', 'contraction', 'churn', 'mrr_end', 'cash_revenue'];
const WARNED_RECORD = randomUUID();

/** Sums a money column exactly (BigInt micro-units). */
const sum = (rows: Record<string, unknown>[], field: string) =>
  rows.reduce((total, row) => total + toMicros(row[field] as string), 0n);

describe('the revenue views through npm start, the dashboard API and the CLI', () => {
  let dataDir: string;
  let running: TallyProcess;
  let dashboard: string;
  let readKey: string;
  const tokens: Record<string, { public: string; secret: string }> = {};
  const get = async (project: string, path: string) => {
    const res = await fetch(`${dashboard}/api/v1/projects/${project}${path}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const env = () => pipelineEnv({ TALLY_DATA_DIR: dataDir });

  beforeAll(async () => {
    dataDir = tempDataDir();
    const store = new FileTokenStore(dataDir);
    for (const project of ['rev-worked', 'rev-dash']) {
      tokens[project] = {
        public: (await store.create(project, 'public')).token,
        secret: (await store.create(project, 'secret')).token,
      };
    }
    // One read key per project in the dashboard: the tests read rev-worked and rev-dash.
    readKey = (await store.create('rev-worked', 'read')).token;
    const dashKey = (await store.create('rev-dash', 'read')).token;
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    dashboard = running.endpoints.dashboardUrl as string;

    // docs/revenue.md's example, with visits: A came from Google, C from the newsletter, B was
    // identified on a direct visit of another visitor, D has no visit at all.
    const day = (date: string, time: string) => Date.parse(`${date}T${time}:00Z`);
    const pageview = (visitor: string, timestamp: number, extra: Record<string, unknown> = {}) => ({
      type: 'pageview',
      id: randomUUID(),
      data: {
        visitor_fingerprint: visitor,
        session_id: `s_${visitor}`,
        url: 'https://shop.example/pricing',
        path: '/pricing',
        timestamp,
        ...extra,
      },
    });
    const analytics = [
      pageview('fp_A', day('2026-01-02', '09:00'), { referrer: 'https://www.google.com/' }),
      pageview('fp_C', day('2026-02-20', '09:00'), {
        url: 'https://shop.example/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=feb',
        utm_source: 'newsletter',
        utm_medium: 'email',
        utm_campaign: 'feb',
      }),
      pageview('v_B', day('2026-01-08', '09:00')),
      {
        type: 'identify',
        id: randomUUID(),
        data: {
          visitor_fingerprint: 'v_B',
          session_id: 's_v_B',
          customer_id: 'B',
          timestamp: day('2026-01-08', '09:01'),
        },
      },
    ];
    const revenue = workedExample('rw').map((data) => ({ type: 'revenue', id: randomUUID(), data }));
    // A data warning in May: an upgrade without mrr_impact.
    revenue.push({
      type: 'revenue',
      id: WARNED_RECORD,
      data: {
        ...(workedExample('rw')[2] as RevenueData),
        transaction_id: 'rw_tx_warn',
        timestamp: day('2026-05-03', '12:00'),
        mrr_impact: undefined,
      },
    });
    // Out of order and partly twice (a client's retries carry the same record id).
    const all = [...analytics, ...revenue].reverse();
    for (const [i, record] of all.entries()) {
      const token = record.type === 'revenue' ? tokens['rev-worked']?.secret : tokens['rev-worked']?.public;
      for (let copy = 0; copy < (i % 3 === 0 ? 2 : 1); copy++) {
        const res = await send(running.url, token as string, record);
        expect(res.status, await res.clone().text()).toBe(202);
      }
    }

    // docs/traffic.md's example, as in pipeline-dashboard.test.ts.
    const at = (time: string) => day('2026-05-04', time);
    const dash = [
      pageview('v1', at('10:00'), { path: '/' }),
      pageview('v1', at('10:10')),
      pageview('v1', at('11:00'), { path: '/signup' }),
      pageview('v2', at('10:05'), { path: '/blog/a', referrer: 'https://www.google.com/' }),
      pageview('v3', at('12:00'), {
        url: 'https://shop.example/pricing?utm_source=newsletter&utm_medium=email',
        utm_source: 'newsletter',
        utm_medium: 'email',
      }),
      {
        type: 'event',
        id: randomUUID(),
        data: { visitor_fingerprint: 'v3', session_id: 's_v3', event_name: 'signup', timestamp: at('12:02') },
      },
      {
        type: 'identify',
        id: randomUUID(),
        data: { visitor_fingerprint: 'v3', session_id: 's_v3', customer_id: 'C', timestamp: at('12:03') },
      },
    ];
    for (const record of dash.reverse()) {
      expect((await send(running.url, tokens['rev-dash']?.public as string, record)).status).toBe(202);
    }
    const subscription = {
      type: 'revenue',
      data: {
        visitor_fingerprint: 'v3',
        session_id: 's_v3',
        customer_id: 'C',
        amount: 30,
        currency: 'USD',
        transaction_id: 'in_worked_1',
        event_type: 'subscription',
        mrr_impact: 30,
        is_recurring: true,
        timestamp: at('12:05'),
      },
    };
    expect((await send(running.url, tokens['rev-dash']?.secret as string, subscription)).status).toBe(202);

    // Everything landed: 10 revenue records and 3 visits in rev-worked, the example's figures in rev-dash,
    // and the consumer's movements table caught up (the reconciliation compares with it).
    const readWith = (key: string, project: string, path: string) =>
      fetch(`${dashboard}/api/v1/projects/${project}${path}`, {
        headers: { authorization: `Bearer ${key}` },
      });
    await eventually(60_000, 'the records landing', async () => {
      const customers = (await (await readWith(readKey, 'rev-worked', '/revenue/customers')).json()) as {
        total: number;
        customers: { first_touch: unknown }[];
      };
      const recon = (await (
        await readWith(readKey, 'rev-worked', '/revenue/reconciliation?month=2026-04')
      ).json()) as { errors: string[] };
      const funnel = (await (
        await readWith(dashKey, 'rev-dash', '/revenue/funnel?from=2026-05-04&to=2026-05-04')
      ).json()) as { total?: { visitors: number; paying: number } };
      return (
        customers.total === 4 &&
        customers.customers.filter((c) => c.first_touch).length === 3 &&
        recon.errors.length === 0 &&
        funnel.total?.visitors === 3 &&
        funnel.total.paying === 1
      );
    });
    readKeys.dash = dashKey;
  });
  const readKeys: { dash?: string } = {};
  afterAll(async () => {
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  it('gives MRR by first-touch channel that adds up to the MRR report (docs/revenue.md)', async () => {
    const body = await get(
      'rev-worked',
      '/revenue/attribution?from=2026-01&to=2026-04&currency=USD&by=channel&touch=first',
    );
    expect(body.total).toEqual({
      customers: 4,
      paying_customers: 3,
      new: '250',
      expansion: '50',
      reactivation: '40',
      contraction: '20',
      churn: '30',
      mrr_end: '290',
      cash_revenue: '2120',
    });
    expect(body.rows).toEqual([
      {
        key: 'Organic Search',
        customers: 1,
        paying_customers: 1,
        new: '100',
        expansion: '50',
        reactivation: '0',
        contraction: '0',
        churn: '0',
        mrr_end: '150',
        cash_revenue: '300',
      },
      {
        key: 'Email',
        customers: 1,
        paying_customers: 1,
        new: '100',
        expansion: '0',
        reactivation: '0',
        contraction: '0',
        churn: '0',
        mrr_end: '100',
        cash_revenue: '1200',
      },
      {
        key: 'Direct',
        customers: 1,
        paying_customers: 1,
        new: '50',
        expansion: '0',
        reactivation: '40',
        contraction: '20',
        churn: '30',
        mrr_end: '40',
        cash_revenue: '120',
      },
      {
        key: '(unattributed)',
        customers: 1,
        paying_customers: 0,
        new: '0',
        expansion: '0',
        reactivation: '0',
        contraction: '0',
        churn: '0',
        mrr_end: '0',
        cash_revenue: '500',
      },
    ]);
    const rows = body.rows as Record<string, unknown>[];
    const total = body.total as Record<string, string>;
    for (const field of MONEY_FIELDS) expect(sum(rows, field), field).toBe(toMicros(total[field] as string));
    // The unbroken figures are the MRR report's over the same months.
    const months = (await get('rev-worked', '/revenue/mrr?from=2026-01&to=2026-04')) as unknown as Record<
      string,
      string
    >[];
    for (const field of ['new', 'expansion', 'reactivation', 'contraction', 'churn', 'cash_revenue'])
      expect(sum(months, field), field).toBe(toMicros(total[field] as string));
    expect(months.at(-1)?.mrr_end).toBe(total.mrr_end);
    // By campaign and by last touch: other groups, the same totals.
    const byCampaign = await get(
      'rev-worked',
      '/revenue/attribution?from=2026-01&to=2026-04&by=utm_campaign',
    );
    expect((byCampaign.rows as { key: string }[]).map((r) => r.key).sort()).toEqual([
      '(none)',
      '(unattributed)',
      'feb',
    ]);
    expect(byCampaign.total).toEqual(body.total);
    const last = await get('rev-worked', '/revenue/attribution?from=2026-01&to=2026-04&touch=last');
    expect(last.total).toEqual(body.total);
  });

  it('gives the same attribution and reconciliation with the CLI', async () => {
    const api = await get('rev-worked', '/revenue/attribution?from=2026-01&to=2026-04');
    const cli = JSON.parse(
      await tally(
        [
          'report',
          'attribution',
          '--project',
          'rev-worked',
          '--from',
          '2026-01',
          '--to',
          '2026-04',
          '--json',
        ],
        env(),
      ),
    );
    expect(cli).toEqual(api);
    // The breakdown by plan, filtered (C, the annual customer, left out), the same through both.
    const { metadata_keys: keys, ...breakdown } = (await get(
      'rev-worked',
      `/revenue/breakdown?from=2026-01&to=2026-04&by=plan&filters=${encodeURIComponent('interval!=annual')}`,
    )) as unknown as { metadata_keys: string[]; total: { customers: number } };
    expect(keys).toContain('plan');
    expect(breakdown.total.customers).toBe(3);
    const cliBreakdown = JSON.parse(
      await tally(
        [
          ...['report', 'breakdown', '--project', 'rev-worked', '--from', '2026-01', '--to', '2026-04'],
          ...['--by', 'plan', '--filters', 'interval!=annual', '--json'],
        ],
        env(),
      ),
    );
    expect(cliBreakdown).toEqual(breakdown);
    for (const month of ['2026-02', '2026-05']) {
      const apiRecon = await get('rev-worked', `/revenue/reconciliation?month=${month}`);
      const cliRecon = JSON.parse(
        await tally(
          ['report', 'reconciliation', '--project', 'rev-worked', '--month', month, '--json'],
          env(),
        ),
      );
      expect(cliRecon).toEqual(apiRecon);
    }
    const text = await tally(
      ['report', 'reconciliation', '--project', 'rev-worked', '--month', '2026-02'],
      env(),
    );
    expect(text).toContain('the bridge closes');
  });

  it("gives the worked example's cohorts and LTV, the same through the API and the CLI", async () => {
    const query = { from: '2026-01', to: '2026-04' };
    const api = await get('rev-worked', `/revenue/cohorts?from=${query.from}&to=${query.to}`);
    expect(api).toEqual(WORKED_EXAMPLE_COHORTS);
    const cli = JSON.parse(
      await tally(
        ['report', 'cohorts', '--project', 'rev-worked', '--from', query.from, '--to', query.to, '--json'],
        env(),
      ),
    );
    expect(cli).toEqual(api);
    // A filter keeps whole customers: C (annual) left out, the February cohort goes.
    const filtered = await get(
      'rev-worked',
      `/revenue/cohorts?from=2026-01&to=2026-04&filters=${encodeURIComponent('interval!=annual')}`,
    );
    expect(filtered.cohorts).toEqual([WORKED_EXAMPLE_COHORTS.cohorts[0]]);
    const text = await tally(
      ['report', 'cohorts', '--project', 'rev-worked', '--from', '2026-01', '--to', '2026-04'],
      env(),
    );
    expect(text).toMatch(/2026-01\s+2\s+3\s+2\s+190\.00\s+100\.00%\s+126\.67%\s+93\.33%/);
    // LTV on every month of the MRR report: 125 ÷ mean(0, 1/3) in March, 96.67 ÷ mean(0, 1/3, 0) in April.
    const months = (await get('rev-worked', '/revenue/mrr?from=2026-01&to=2026-04')) as unknown as {
      ltv: string | null;
    }[];
    expect(months.map((m) => m.ltv)).toEqual([null, null, '750', '870']);
    const cliMonths = JSON.parse(
      await tally(
        ['report', 'mrr', '--project', 'rev-worked', '--from', '2026-01', '--to', '2026-04', '--json'],
        env(),
      ),
    );
    expect(cliMonths).toEqual(months);
  });

  it('reconciles each month: cash by kind, a bridge that closes, warnings with their record ids', async () => {
    const feb = await get('rev-worked', '/revenue/reconciliation?month=2026-02&currency=USD');
    expect(feb.cash).toEqual({
      recurring: '1280',
      one_off: '0',
      refunds: '0',
      churn: '0',
      unlabelled: '0',
      total: '1280',
      records: 3,
    });
    expect(feb.bridge).toEqual({
      mrr_start: '150',
      new: '100',
      expansion: '50',
      reactivation: '0',
      contraction: '20',
      churn: '0',
      computed_end: '280',
      mrr_end: '280',
      closes: true,
    });
    expect(feb.errors).toEqual([]);
    expect(feb.stored_movements).toEqual({
      new: '100',
      expansion: '50',
      reactivation: '0',
      contraction: '20',
      churn: '0',
    });
    const apr = await get('rev-worked', '/revenue/reconciliation?month=2026-04');
    expect(apr.cash).toMatchObject({ recurring: '40', one_off: '500', total: '540' });
    expect(apr.bridge).toMatchObject({ mrr_start: '250', reactivation: '40', mrr_end: '290', closes: true });
    const may = await get('rev-worked', '/revenue/reconciliation?month=2026-05');
    expect(may.warnings).toEqual([
      expect.objectContaining({
        customer_id: 'A',
        transaction_id: 'rw_tx_warn',
        record_ids: [WARNED_RECORD],
      }),
    ]);
    expect(may.bridge).toMatchObject({ mrr_start: '290', mrr_end: '290', closes: true });
  });

  it('opens every figure into items that add up to it', async () => {
    const attribution = await get('rev-worked', '/revenue/attribution?from=2026-01&to=2026-04');
    const total = attribution.total as Record<string, string>;
    for (const figure of [
      'new',
      'expansion',
      'reactivation',
      'contraction',
      'churn',
      'mrr_end',
      'cash_revenue',
    ]) {
      const drill = await get('rev-worked', `/revenue/records?figure=${figure}&from=2026-01&to=2026-04`);
      expect(drill.total, figure).toBe(total[figure]);
      expect(sum(drill.items as Record<string, unknown>[], 'amount'), figure).toBe(
        toMicros(total[figure] as string),
      );
    }
    const newBusiness = await get('rev-worked', '/revenue/records?figure=new&from=2026-01&to=2026-04');
    expect(
      (newBusiness.items as { customer_id: string; amount: string }[]).map((i) => [i.customer_id, i.amount]),
    ).toEqual([
      ['A', '100'],
      ['B', '50'],
      ['C', '100'],
    ]);
    const direct = await get(
      'rev-worked',
      '/revenue/records?figure=cash_revenue&from=2026-01&to=2026-04&by=channel&touch=first&key=Direct',
    );
    expect(direct).toMatchObject({
      total: '120',
      count: 4,
      group: { by: 'channel', touch: 'first', key: 'Direct' },
    });
    const paying = await get(
      'rev-worked',
      '/revenue/records?figure=paying_customers&from=2026-01&to=2026-04',
    );
    expect(paying).toMatchObject({ total: '3', count: 3 });
    // Listed a page at a time: each page is the full list's slice, count and total stay the figure's.
    const all = await get('rev-worked', '/revenue/records?figure=cash_revenue&from=2026-01&to=2026-04');
    expect(all.offset).toBe(0);
    const pages = [];
    for (let offset = 0; offset < (all.count as number); offset += 2) {
      const page = await get(
        'rev-worked',
        `/revenue/records?figure=cash_revenue&from=2026-01&to=2026-04&offset=${offset}&limit=2`,
      );
      expect(page).toMatchObject({ total: all.total, count: all.count, offset });
      expect((page.items as unknown[]).length).toBeLessThanOrEqual(2);
      pages.push(...(page.items as unknown[]));
    }
    expect(pages).toEqual(all.items);
    expect((all.items as unknown[]).length).toBe(all.count);
  });

  it("lists the customers and shows a customer's page", async () => {
    const list = await get('rev-worked', '/revenue/customers');
    expect(
      (list.customers as Record<string, unknown>[]).map((c) => [
        c.customer_id,
        c.mrr,
        c.status,
        (c.first_touch as { channel?: string } | null)?.channel ?? null,
        c.cash_revenue,
      ]),
    ).toEqual([
      ['A', '150', 'active', 'Organic Search', '350'],
      ['C', '100', 'active', 'Email', '1200'],
      ['B', '40', 'active', 'Direct', '120'],
      ['D', '0', 'one_off', null, '500'],
    ]);
    // A page reads the touches of its own customers only, and is the full list's slice exactly.
    const page = await get('rev-worked', '/revenue/customers?offset=1&limit=2');
    expect(page.total).toBe(4);
    expect(page.customers).toEqual((list.customers as unknown[]).slice(1, 3));
    const a = await get('rev-worked', '/revenue/customers/A');
    expect((a.records as unknown[]).length).toBe(4);
    expect((a.history as { customer_mrr: string }[]).map((h) => h.customer_mrr)).toEqual([
      '100',
      '150',
      '150',
      '150',
    ]);
    expect(a.first_touch).toMatchObject({ visitor_id: 'fp_A', channel: 'Organic Search' });
    expect((a.visits as { pageviews: unknown[] }[]).map((v) => v.pageviews.length)).toEqual([1]);
    const b = await get('rev-worked', '/revenue/customers/B');
    expect(b.identified_at).toBe('2026-01-08T09:01:00.000Z');
    const missing = await fetch(`${dashboard}/api/v1/projects/rev-worked/revenue/customers/nobody`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(missing.status).toBe(404);
  });

  it("gives docs/revenue.md's new MRR by first-touch channel and acquisition funnel", async () => {
    const key = readKeys.dash as string;
    const read = async (path: string) =>
      (
        await fetch(`${dashboard}/api/v1/projects/rev-dash${path}`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json() as Promise<Record<string, unknown>>;
    const attribution = await read('/revenue/attribution?from=2026-05&to=2026-05');
    expect(attribution.rows).toEqual([
      expect.objectContaining({ key: 'Email', new: '30', mrr_end: '30', cash_revenue: '30' }),
    ]);
    const funnel = await read('/revenue/funnel?from=2026-05-04&to=2026-05-04&by=channel');
    expect(funnel.rows).toEqual([
      expect.objectContaining({ key: 'Direct', visitors: 1, identified: 0, paying: 0, mrr: '0' }),
      {
        key: 'Email',
        visitors: 1,
        identified: 1,
        paying: 1,
        identified_rate: 1,
        paying_rate: 1,
        paying_customers: 1,
        mrr: '30',
        cash_revenue: '30',
        mrr_per_1000_visitors: '30000',
      },
      expect.objectContaining({ key: 'Organic Search', visitors: 1, identified: 0, paying: 0 }),
    ]);
  });

  it("shows the project's ingestion health: records landed by type, dead letters, lag, refusals", async () => {
    const health = await get('rev-worked', '/health');
    const types = health.types as { type: string; status: string; landed_last_hour: number }[];
    expect(types.map((t) => [t.type, t.status, t.landed_last_hour])).toEqual([
      ['pageview', 'ok', 3],
      ['event', 'none', 0],
      ['identify', 'ok', 1],
      ['revenue', 'ok', 10],
    ]);
    expect(health.dead_letters).toEqual({ count: 0, by_reason: [], recent: [] });
    expect(health.consumer_groups).toEqual(expect.arrayContaining([expect.objectContaining({ lag: 0 })]));
    // npm start hands its log to the dashboard, and the state store holds the gateway's refusal counts.
    expect(health.unavailable).toEqual([]);
    expect(health.refused).toMatchObject({ total: 0, hours: [], by_status: [] });
  });
});
