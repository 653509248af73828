// The daily MRR report and operator-loaded exchange rates through `npm start`'s process, the dashboard's API
// and the tally CLI (which reaches the running warehouse through its published endpoint): docs/revenue.md's
// worked example plus a GBP customer, sent to /api/ingest and landed by the real consumers. The CLI's
// `report mrr --daily` (and `--interval day`) prints exactly the API's daily figures; `revenue rates load`
// stores a rates file, `rates list` shows it; `report mrr --convert-to EUR`, monthly and daily, equals the
// API's convert_to answer, marked converted, listing the rates used and the currency left out.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workedExample } from '@tally/reports/testing';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const PROJECT = 'rev-daily';

describe('daily MRR and exchange rates through npm start, the API and the CLI', () => {
  let dataDir: string;
  let running: TallyProcess;
  let dashboard: string;
  let readKey: string;
  const env = () => pipelineEnv({ TALLY_DATA_DIR: dataDir });
  const get = async (path: string): Promise<unknown> => {
    const res = await fetch(`${dashboard}/api/v1/projects/${PROJECT}${path}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return res.json();
  };
  const cli = async (args: string[]) =>
    JSON.parse(await tally([...args, '--project', PROJECT, '--json'], env()));

  beforeAll(async () => {
    dataDir = tempDataDir();
    const store = new FileTokenStore(dataDir);
    const secret = (await store.create(PROJECT, 'secret')).token;
    readKey = (await store.create(PROJECT, 'read')).token;
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    dashboard = running.endpoints.dashboardUrl as string;
    const records = [
      ...workedExample('rd'),
      {
        visitor_fingerprint: 'fp_E',
        session_id: 's_E',
        customer_id: 'E',
        amount: 25,
        currency: 'GBP',
        transaction_id: 'rd_gbp_1',
        event_type: 'subscription' as const,
        mrr_impact: 25,
        is_recurring: true,
        timestamp: Date.parse('2026-03-05T08:00:00Z'),
      },
    ];
    for (const data of records.reverse()) {
      const res = await send(running.url, secret, { type: 'revenue', id: randomUUID(), data });
      expect(res.status, await res.clone().text()).toBe(202);
    }
    await eventually(60_000, 'the revenue landing', async () => {
      const months = (await get('/revenue/mrr?from=2026-04&to=2026-04')) as Array<Record<string, string>>;
      return (
        months.some((m) => m.currency === 'USD' && m.mrr_end === '290' && m.cash_revenue === '540') &&
        months.some((m) => m.currency === 'GBP' && m.mrr_end === '25')
      );
    });
  });

  afterAll(async () => {
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  it('prints the same daily figures as the API, with --daily and --interval day', async () => {
    const api = (await get('/revenue/mrr/daily?from=2026-01-01&to=2026-04-30')) as Array<
      Record<string, unknown>
    >;
    expect(api).toHaveLength(120 * 2);
    const daily = await cli(['report', 'mrr', '--daily', '--from', '2026-01-01', '--to', '2026-04-30']);
    expect(daily).toEqual(api);
    const usd = await cli([
      'report',
      'mrr',
      '--interval',
      'day',
      '--from',
      '2026-02-01',
      '--to',
      '2026-03-31',
      '--currency',
      'usd',
    ]);
    expect(usd).toEqual(
      api.filter((d) => d.currency === 'USD' && String(d.date) >= '2026-02' && String(d.date) < '2026-04'),
    );
    // The spec's month ends, on the last day of each month.
    const ends = api.filter(
      (d) => d.currency === 'USD' && /-(01-31|02-28|03-31|04-30)$/.test(String(d.date)),
    );
    expect(ends.map((d) => d.mrr)).toEqual(['150', '280', '250', '290']);
    const text = await tally(
      [
        'report',
        'mrr',
        '--daily',
        '--project',
        PROJECT,
        '--from',
        '2026-02-25',
        '--to',
        '2026-02-25',
        '--currency',
        'USD',
      ],
      env(),
    );
    expect(text).toMatch(/2026-02-25\s+USD\s+280\.00\s+3360\.00\s+3\s+100\.00/);
  });

  it('refuses convert_to before rates are loaded, then converts as the API does once they are', async () => {
    await expect(
      tally(
        [
          'report',
          'mrr',
          '--project',
          PROJECT,
          '--from',
          '2026-01',
          '--to',
          '2026-04',
          '--convert-to',
          'EUR',
        ],
        env(),
      ),
    ).rejects.toThrow(/no exchange rates to this currency are loaded/);
    const file = join(dataDir, 'rates.csv');
    writeFileSync(
      file,
      'month,currency,rate_to_EUR\n2026-01,USD,0.9\n2026-02,USD,0.92\n2026-03,USD,0.925\n2026-04,USD,0.91\n2026-03,GBP,1.17\n',
    );
    expect(await tally(['revenue', 'rates', 'load', file], env())).toBe('loaded 5 exchange rates to EUR\n');
    expect(JSON.parse(await tally(['revenue', 'rates', 'list', '--json'], env()))).toHaveLength(5);
    expect((await get('/revenue/exchange-rates')) as { bases: string[] }).toMatchObject({ bases: ['EUR'] });

    const apiMonths = (await get('/revenue/mrr?from=2026-01&to=2026-04&convert_to=EUR')) as Array<
      Record<string, unknown>
    >;
    expect(
      await cli(['report', 'mrr', '--from', '2026-01', '--to', '2026-04', '--convert-to', 'EUR']),
    ).toEqual(apiMonths);
    // March: 250 × 0.925 + 25 × 1.17 = 260.5; April: 290 × 0.91, GBP has no April rate and is left out.
    expect(apiMonths.map((m) => [m.month, m.converted_to, m.mrr_end, m.missing_currencies])).toEqual([
      ['2026-01', 'EUR', '135', []],
      ['2026-02', 'EUR', '257.6', []],
      ['2026-03', 'EUR', '260.5', []],
      ['2026-04', 'EUR', '263.9', ['GBP']],
    ]);
    const apiDays = await get('/revenue/mrr/daily?from=2026-03-30&to=2026-04-02&convert_to=EUR');
    expect(
      await cli([
        'report',
        'mrr',
        '--daily',
        '--from',
        '2026-03-30',
        '--to',
        '2026-04-02',
        '--convert-to',
        'EUR',
      ]),
    ).toEqual(apiDays);
    const text = await tally(
      ['report', 'mrr', '--project', PROJECT, '--from', '2026-03', '--to', '2026-04', '--convert-to', 'EUR'],
      env(),
    );
    expect(text).toContain('converted to EUR with the loaded rates');
    expect(text).toContain('2026-04: USD 0.91 (2026-04); left out, no rate: GBP');
  });

  it('converts attribution, the breakdown and the customers as the MRR report, the CLI printing the API', async () => {
    const range = 'from=2026-01&to=2026-04';
    const months = (await get(`/revenue/mrr?${range}&convert_to=EUR`)) as Array<Record<string, string>>;
    const sum = (field: string) =>
      months.reduce((total, m) => total + Math.round(Number(m[field]) * 1e6), 0) / 1e6;
    for (const [path, args] of [
      [`/revenue/breakdown?${range}&by=plan&convert_to=EUR`, ['report', 'revenue/breakdown', '--by', 'plan']],
      [`/revenue/attribution?${range}&convert_to=EUR`, ['report', 'attribution']],
    ] as const) {
      const api = (await get(path)) as {
        currency: string;
        converted_to: string;
        missing_currencies: string[];
        rows: Array<Record<string, unknown>>;
        total: Record<string, string>;
      };
      expect(await cli([...args, '--from', '2026-01', '--to', '2026-04', '--convert-to', 'EUR'])).toEqual(
        api,
      );
      expect(api).toMatchObject({ currency: 'EUR', converted_to: 'EUR', missing_currencies: ['GBP'] });
      // The MRR at the end is April's converted MRR; each movement and payment at its own month's rate, so
      // the range's figures are the converted months' added up.
      expect(api.total.mrr_end).toBe('263.9');
      for (const figure of ['new', 'expansion', 'contraction', 'churn', 'cash_revenue'])
        expect(Number(api.total[figure]), figure).toBeCloseTo(sum(figure), 6);
    }
    // No rates to USD are loaded: a 400 that says so, as the MRR report's.
    const refused = await fetch(
      `${dashboard}/api/v1/projects/${PROJECT}/revenue/breakdown?${range}&by=plan&convert_to=USD`,
      { headers: { authorization: `Bearer ${readKey}` } },
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/no exchange rates to this currency are loaded/);
    // Customers: one row each, the MRR now at each currency's latest rate (USD April 0.91, GBP March 1.17),
    // the cash at each record's month's rate.
    const customers = (await get('/revenue/customers?convert_to=EUR')) as {
      currency: string;
      converted_to: string;
      missing_currencies: string[];
      customers: Array<{
        customer_id: string;
        currency: string;
        mrr: string;
        cash_revenue: string;
        status: string;
      }>;
    };
    expect(await cli(['report', 'revenue/customers', '--convert-to', 'EUR'])).toEqual(customers);
    const inUsd = (await get('/revenue/customers?currency=USD')) as typeof customers;
    expect(customers).toMatchObject({ currency: 'EUR', converted_to: 'EUR', missing_currencies: [] });
    expect(customers.customers).toHaveLength(inUsd.customers.length + 1);
    expect(customers.customers.find((c) => c.customer_id === 'E')).toMatchObject({
      currency: 'EUR',
      mrr: '29.25',
      cash_revenue: '29.25',
      status: 'active',
    });
    for (const usdRow of inUsd.customers) {
      const row = customers.customers.find((c) => c.customer_id === usdRow.customer_id);
      expect(Number(row?.mrr), usdRow.customer_id).toBeCloseTo(Number(usdRow.mrr) * 0.91, 6);
      expect(row?.status).toBe(usdRow.status);
    }
    // Ranked by the converted MRR, largest first.
    const mrrs = customers.customers.map((c) => Number(c.mrr));
    expect(mrrs).toEqual([...mrrs].sort((a, b) => b - a));
    const text = await tally(
      [
        'report',
        'attribution',
        '--project',
        PROJECT,
        '--from',
        '2026-01',
        '--to',
        '2026-04',
        '--convert-to',
        'EUR',
      ],
      env(),
    );
    expect(text).toContain('converted to EUR (no rate: GBP)');
  });

  it("converts a customer's page into the converted list's row, the CLI printing the API", async () => {
    type Page = {
      customer_id: string;
      summaries: Array<{ customer_id: string; currency: string; mrr: string; cash_revenue: string }>;
      converted_to?: string;
      rates?: Array<{ currency: string; period: string; rate: string }>;
      missing_currencies?: string[];
      history: Array<{ currency: string }>;
    };
    const list = (await get('/revenue/customers?convert_to=EUR')) as { customers: Page['summaries'] };
    // E pays 25 GBP a month from March: MRR now at GBP's latest rate (March, 1.17), cash at March's.
    const e = (await get('/revenue/customers/E?convert_to=EUR')) as Page;
    expect(await cli(['report', 'revenue/customers/E', '--convert-to', 'EUR'])).toEqual(e);
    expect(e).toMatchObject({
      customer_id: 'E',
      converted_to: 'EUR',
      rates: [{ currency: 'GBP', period: '2026-03', rate: '1.17' }],
      missing_currencies: [],
    });
    expect(e.summaries).toEqual([list.customers.find((c) => c.customer_id === 'E')]);
    expect(e.summaries[0]).toMatchObject({ currency: 'EUR', mrr: '29.25', cash_revenue: '29.25' });
    // The history stays in the currency it was recorded in.
    expect(new Set(e.history.map((h) => h.currency))).toEqual(new Set(['GBP']));
    // A USD customer: its MRR now at USD's latest rate (April, 0.91), exactly its row of the list.
    const usd = (await get('/revenue/customers?currency=USD')) as { customers: Page['summaries'] };
    const top = usd.customers[0] as Page['summaries'][number];
    const page = (await get(`/revenue/customers/${top.customer_id}?convert_to=EUR`)) as Page;
    expect(page.summaries).toEqual([list.customers.find((c) => c.customer_id === top.customer_id)]);
    expect(Number(page.summaries[0]?.mrr)).toBeCloseTo(Number(top.mrr) * 0.91, 6);
    expect(page.missing_currencies).toEqual([]);
    // Without convert_to: one summary per currency, unmarked.
    const plain = (await get('/revenue/customers/E')) as Page;
    expect(plain.summaries.map((s) => [s.currency, s.mrr])).toEqual([['GBP', '25']]);
    expect(plain.converted_to).toBeUndefined();
    // No rates to USD are loaded: a 400 that says so.
    const refused = await fetch(
      `${dashboard}/api/v1/projects/${PROJECT}/revenue/customers/E?convert_to=USD`,
      {
        headers: { authorization: `Bearer ${readKey}` },
      },
    );
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/no exchange rates to this currency are loaded/);
  });
});
