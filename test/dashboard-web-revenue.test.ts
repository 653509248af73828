// The dashboard's revenue views in real headless Chromium against npm start's process (the setup of
// dashboard-web.test.ts): docs/revenue.md's worked example, with visits that give A, B and C a first
// touch, sent through /api/ingest and landed by the real consumers; a user signed in through the link
// `tally users add` prints. The page shows exactly the spec's figures, the attribution table adds up,
// a figure and a table cell open drill-downs whose items add up to them, the breakdown by plan, interval
// and a typed metadata key adds up, a row filters every panel (a removable chip), the metadata search
// lists the matching records, a month reconciles, a customer's page shows its history and visits, the MRR
// chart switches to days and, once the operator loads rates (`tally revenue rates load`), to a converted
// series labelled as such, and the health view shows a type stalled once its records stop while another
// keeps landing. Money reads as money (the reader's locale, the currency's symbol, cents), the exact amount
// in a card's title and in the drill-downs and the reconciliation, which show every decimal.
// Screenshots go to test-output/dashboard-web/ to be looked at.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workedExample } from '@tally/reports/testing';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium } from './support/browser.ts';
import { eventually, ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'revenue-site';
const EMAIL = 'finance@example.com';
const PASSWORD = 'a long enough password';
const POLL = { timeout: 20_000, interval: 100 };
const RANGE = 'from=2026-01&to=2026-04';

let browser: Browser;
let running: TallyProcess;
let dashboard: string;
let signInToken: string;
let publicToken: string;
let secretToken: string;
let dataDir: string;
const contexts: BrowserContext[] = [];
const consoleErrors: string[] = [];

async function newPage(colorScheme: 'light' | 'dark' = 'light', width = 1280) {
  const context = await browser.newContext({
    locale: 'en-US',
    timezoneId: 'America/Los_Angeles',
    colorScheme,
    viewport: { width, height: 900 },
  });
  contexts.push(context);
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: uncaught ${error.message}`));
  return page;
}

async function shoot(page: Page, name: string) {
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

function tableRows(rows: Locator): Promise<string[][]> {
  return rows.evaluateAll((elements) =>
    elements.map((row) =>
      Array.from((row as unknown as { cells: ArrayLike<{ innerText: string }> }).cells, (cell) =>
        cell.innerText.trim(),
      ),
    ),
  );
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();
/** A whole number of dollars as the page shows it (en-US): "1,200" → "$1,200.00". */
const usd = (amount: string) => `$${amount}.00`;
/** A table row whose cells from `from` on are dollars. */
const usdFrom = (from: number, row: string[]) => row.map((cell, i) => (i >= from ? usd(cell) : cell));
const view = (name: string, query = RANGE) =>
  `${dashboard}/projects/${PROJECT}/${name}${query ? `?${query}` : ''}`;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await buildWebIfStale();
  dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  publicToken = (await store.create(PROJECT, 'public')).token;
  secretToken = (await store.create(PROJECT, 'secret')).token;
  const readKey = (await store.create(PROJECT, 'read')).token;
  const printed = await tally(
    ['users', 'add', EMAIL, '--project', PROJECT],
    pipelineEnv({ TALLY_DATA_DIR: dataDir }),
  );
  signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  [browser, running] = await Promise.all([
    launchChromium(),
    // Refusal counts are stored every half second instead of every minute, for the health view.
    startTallyProcess({ TALLY_DATA_DIR: dataDir, REFUSAL_FLUSH_MS: '500' }),
  ]);
  dashboard = running.endpoints.dashboardUrl as string;

  const day = (date: string, time: string) => Date.parse(`${date}T${time}:00Z`);
  const pageview = (visitor: string, timestamp: number, extra: Record<string, unknown> = {}) => ({
    type: 'pageview',
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
    pageview('fp_A', day('2026-01-02', '09:04'), { path: '/signup', url: 'https://shop.example/signup' }),
    pageview('fp_C', day('2026-02-20', '09:00'), {
      url: 'https://shop.example/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=feb',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'feb',
    }),
    pageview('v_B', day('2026-01-08', '09:00')),
    {
      type: 'identify',
      data: {
        visitor_fingerprint: 'v_B',
        session_id: 's_v_B',
        customer_id: 'B',
        timestamp: day('2026-01-08', '09:01'),
      },
    },
  ];
  for (const record of analytics) expect((await send(running.url, publicToken, record)).status).toBe(202);
  for (const data of workedExample('web')) {
    expect((await send(running.url, secretToken, { type: 'revenue', data })).status).toBe(202);
  }
  await eventually(60_000, 'the example landing', async () => {
    const headers = { authorization: `Bearer ${readKey}` };
    const base = `${dashboard}/api/v1/projects/${PROJECT}/revenue`;
    const customers = (await (await fetch(`${base}/customers`, { headers })).json()) as {
      total?: number;
      customers?: { first_touch: unknown }[];
    };
    const recon = (await (await fetch(`${base}/reconciliation?month=2026-04`, { headers })).json()) as {
      errors?: string[];
    };
    return (
      customers.total === 4 &&
      customers.customers?.filter((c) => c.first_touch).length === 3 &&
      recon.errors?.length === 0
    );
  });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await running?.stop('SIGTERM');
});

describe('the revenue views in Chromium', () => {
  let page: Page;

  it("shows docs/revenue.md's figures for April and the range's cash", async () => {
    page = await newPage();
    await page.goto(`${dashboard}/set-password#token=${signInToken}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(/\/projects\/revenue-site/);
    await page.getByRole('link', { name: 'Revenue' }).click();
    await page.waitForURL(/\/revenue$/);
    await page.goto(view('revenue'));
    const figure = (id: string) => text(page, `#revenue-${id}`);
    await expect
      .poll(
        async () =>
          Object.fromEntries(
            await Promise.all(
              ['mrr', 'arr', 'net-new', 'new', 'churned', 'paying', 'gross-churn', 'logo-churn', 'cash'].map(
                async (id) => [id, await figure(id)],
              ),
            ),
          ),
        POLL,
      )
      .toEqual({
        mrr: '$290.00',
        arr: '$3,480.00',
        'net-new': '$40.00',
        new: '$0.00',
        churned: '$0.00',
        paying: '3',
        'gross-churn': '0%',
        'logo-churn': '0%',
        cash: '$2,120.00',
      });
    // ARPA is 290 / 3: read to the cent, exact in the card's title.
    expect(await figure('arpa')).toBe('$96.67');
    expect(await page.locator('#revenue-arpa').getAttribute('title')).toBe('Exactly $96.666667');
    expect(await page.locator('#revenue-mrr').getAttribute('title')).toBeNull(); // nothing more to say
    // The funnel's money (MRR now, cash to date, MRR per 1,000 visitors) to the cent too, never "96,666.666667".
    await page.locator('#funnel-table tbody tr').first().waitFor();
    const funnel = await tableRows(page.locator('#funnel-table tbody tr'));
    expect(funnel.length).toBeGreaterThan(1);
    for (const row of funnel) for (const cell of row.slice(4)) expect(cell).toMatch(/^(\$[\d,]+\.\d\d|—)$/);
    // Nothing wider than the window (no horizontal scroll bar).
    expect(
      await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
    ).toBe(0);
    await shoot(page, 'revenue-desktop-light');
  });

  it('breaks MRR down by first-touch channel, the rows adding up to the total', async () => {
    const rows = () =>
      tableRows(page.locator('#attribution-table:not(.is-stale) tbody tr, #attribution-table tfoot tr'));
    // key, customers, paying, new, expansion, reactivation, contraction, churn, MRR at end, cash
    await expect.poll(rows, POLL).toEqual(
      [
        ['Organic Search', '1', '1', '100', '50', '0', '0', '0', '150', '300'],
        ['Email', '1', '1', '100', '0', '0', '0', '0', '100', '1,200'],
        ['Direct', '1', '1', '50', '0', '40', '20', '30', '40', '120'],
        ['(unattributed)', '1', '0', '0', '0', '0', '0', '0', '0', '500'],
        ['Total', '4', '3', '250', '50', '40', '20', '30', '290', '2,120'],
      ].map((row) => usdFrom(3, row)),
    );
    const groupBy = page.getByRole('tablist', { name: 'Group by' });
    await groupBy.getByRole('tab', { name: 'Campaign' }).click();
    await expect
      .poll(async () => (await rows()).map((r) => r[0]), POLL)
      .toEqual(['(none)', 'feb', '(unattributed)', 'Total']);
    await groupBy.getByRole('tab', { name: 'Channel' }).click();
    expect(page.url()).not.toContain('by=');
  });

  it('opens a figure and a table cell into items that add up to them', async () => {
    await page.locator('#revenue-cash').click();
    const dialog = page.getByRole('dialog');
    await expect
      .poll(() => dialog.locator('#drill-total').innerText(), POLL)
      .toBe('9 items, adding up to $2,120.00');
    await shoot(page, 'revenue-drilldown-cash');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Direct: open cash revenue $120.00' }).click();
    await expect
      .poll(() => dialog.locator('#drill-total').innerText(), POLL)
      .toBe('4 items, adding up to $120.00');
    expect((await tableRows(dialog.locator('tbody tr'))).map((r) => [r[0], r[1], r[3], r[4]])).toEqual([
      ['2026-01-10', 'B', 'subscription', '$50.00'],
      ['2026-02-20', 'B', 'downgrade', '$30.00'],
      ['2026-03-15', 'B', 'churn', '$0.00'],
      ['2026-04-02', 'B', 'subscription', '$40.00'],
    ]);
    await shoot(page, 'revenue-drilldown-direct');
    await page.keyboard.press('Escape');
  });

  it('breaks revenue down by plan and a metadata key, filters every panel by a row, and searches metadata', async () => {
    const rows = () =>
      tableRows(page.locator('#breakdown-table:not(.is-stale) tbody tr, #breakdown-table tfoot tr'));
    // key, customers, paying, new, expansion, reactivation, contraction, churn, MRR at end, cash: each
    // customer by the plan on its latest record that has one (A's renewal has none: still business).
    const byPlan = [
      ['business', '1', '1', '100', '50', '0', '0', '0', '150', '300'],
      ['pro', '1', '1', '100', '0', '0', '0', '0', '100', '1,200'],
      ['starter', '1', '1', '50', '0', '40', '20', '30', '40', '120'],
      ['lifetime', '1', '0', '0', '0', '0', '0', '0', '0', '500'],
      ['Total', '4', '3', '250', '50', '40', '20', '30', '290', '2,120'],
    ].map((row) => usdFrom(3, row));
    await expect.poll(rows, POLL).toEqual(byPlan);
    const breakDownBy = page.getByRole('tablist', { name: 'Break down by' });
    await breakDownBy.getByRole('tab', { name: 'Interval' }).click();
    await expect
      .poll(async () => (await rows()).map((r) => [r[0], r[8]]), POLL)
      .toEqual([
        ['(none)', '$190.00'],
        ['annual', '$100.00'],
        ['Total', '$290.00'],
      ]);
    // Any metadata key, typed (the keys present are offered).
    await page.locator('#breakdown-key').fill('plan');
    await page.getByRole('button', { name: 'Break down', exact: true }).click();
    await expect.poll(() => text(page, '#breakdown-title'), POLL).toContain('Revenue by metadata plan');
    await expect.poll(rows, POLL).toEqual(byPlan);
    await page.locator('#breakdown-title').scrollIntoViewIfNeeded();
    await shoot(page, 'revenue-breakdown-plan');

    // A row filters every revenue panel to its customers (B only), shown as a removable chip.
    await page.getByRole('button', { name: 'Filter by Metadata plan starter' }).click();
    await expect.poll(() => text(page, '#revenue-mrr'), POLL).toBe('$40.00');
    expect(decodeURIComponent(page.url())).toContain('filters=metadata.plan==starter');
    await expect
      .poll(() => tableRows(page.locator('#attribution-table:not(.is-stale) tbody tr')), POLL)
      .toEqual([usdFrom(3, ['Direct', '1', '1', '50', '0', '40', '20', '30', '40', '120'])]);
    await expect.poll(rows, POLL).toEqual([byPlan[2], ['Total', ...(byPlan[2] as string[]).slice(1)]]);
    expect(await text(page, '.revenue-filters .chip')).toContain('Metadata plan is starter');
    await page.locator('#revenue-cash').click();
    const dialog = page.getByRole('dialog');
    await expect
      .poll(() => dialog.locator('#drill-total').innerText(), POLL)
      .toBe('4 items, adding up to $120.00');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.locator('.revenue-filters').scrollIntoViewIfNeeded();
    await shoot(page, 'revenue-filtered-starter');
    await page.getByRole('button', { name: 'Remove filter: Metadata plan is starter' }).click();
    await expect.poll(() => text(page, '#revenue-mrr'), POLL).toBe('$290.00');
    expect(await page.locator('.revenue-filters').count()).toBe(0);
    await breakDownBy.getByRole('tab', { name: 'Plan' }).click();
    expect(page.url()).not.toContain('breakdown=');

    // The metadata search lists the records with plan = pro, as `tally revenue search` does.
    await page.locator('#search-key').fill('plan');
    await page.locator('#search-value').fill('pro');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect
      .poll(
        async () => (await tableRows(page.locator('#search-table tbody tr'))).map((r) => r.slice(1, 6)),
        POLL,
      )
      .toEqual([
        ['A', 'web_tx_1', 'subscription', '$100.00', 'plan=pro'],
        ['C', 'web_tx_5', 'subscription', '$1,200.00', 'plan=pro, interval=annual'],
      ]);
    await page.locator('#metadata-search-title').scrollIntoViewIfNeeded();
    await shoot(page, 'revenue-metadata-search');
  });

  it('reconciles February: cash by kind and a bridge that closes', async () => {
    await page.locator('#reconciliation-month').selectOption('2026-02');
    await expect
      .poll(() => tableRows(page.locator('#bridge-table tr')), POLL)
      .toEqual([
        ['MRR at the start', '$150.00'],
        ['+ New business', '$100.00'],
        ['+ Expansion', '$50.00'],
        ['+ Reactivation', '$0.00'],
        ['− Contraction', '$20.00'],
        ['− Churn', '$0.00'],
        ['= Computed end', '$280.00'],
        ['MRR at the end', '$280.00'],
      ]);
    expect(await text(page, '#bridge-closes')).toContain('closes');
    expect((await tableRows(page.locator('#cash-table tfoot tr')))[0]).toEqual([
      'Total (3 records)',
      '$1,280.00',
    ]);
    await page.locator('#reconciliation-title').scrollIntoViewIfNeeded();
    await shoot(page, 'revenue-reconciliation');
  });

  it("shows the customers and a customer's page: history, records, visits", async () => {
    await page.getByRole('link', { name: 'Customers' }).click();
    await expect
      .poll(() => tableRows(page.locator('#customers-table tbody tr')), POLL)
      .toEqual([
        ['A', '$150.00', 'Paying', '2026-01-02', 'Organic Search · Google', '$300.00'],
        ['C', '$100.00', 'Paying', '2026-02-20', 'Email · newsletter', '$1,200.00'],
        ['B', '$40.00', 'Paying', '2026-01-08', 'Direct · Direct / None', '$120.00'],
        ['D', '$0.00', 'One-off', '2026-04-10', '(unattributed)', '$500.00'],
      ]);
    await shoot(page, 'customers-desktop-light');
    await page.getByRole('link', { name: 'A', exact: true }).click();
    await expect.poll(() => text(page, '#customer-mrr-USD'), POLL).toBe('$150.00');
    expect(await text(page, '#customer-first-touch')).toContain('Organic Search');
    expect((await tableRows(page.locator('#history-table tbody tr'))).map((r) => [r[1], r[4], r[5]])).toEqual(
      [
        ['web_tx_1', '$100.00', 'new'],
        ['web_tx_3', '$150.00', 'expansion'],
        ['web_tx_6', '$150.00', '—'],
      ],
    );
    expect(await page.locator('#visit-timeline > li').count()).toBe(1);
    expect(await text(page, '#visit-timeline')).toContain('viewed /signup');
    await shoot(page, 'customer-desktop-light');
  });

  it('finds customers: search by id, a status, and sorted by a column (kept in the URL)', async () => {
    await page.goto(view('customers'));
    const ids = () =>
      tableRows(page.locator('#customers-table tbody tr')).then((rows) => rows.map((r) => r[0]));
    await expect.poll(ids, POLL).toEqual(['A', 'C', 'B', 'D']);
    // Lifetime cash, most first; then least first.
    await page.getByRole('button', { name: 'Lifetime cash' }).click();
    await page.waitForURL(/sort=cash&order=desc/);
    await expect.poll(ids, POLL).toEqual(['C', 'D', 'A', 'B']);
    expect(await text(page, '#customers-title')).toMatch(/most lifetime cash first$/);
    await page.getByRole('button', { name: 'Lifetime cash' }).click();
    await expect.poll(ids, POLL).toEqual(['B', 'A', 'D', 'C']);
    expect(await page.locator('th[aria-sort="ascending"]').innerText()).toContain('Lifetime cash');
    // One status, then a search on top of it.
    await page.getByLabel('Status').selectOption('active');
    await page.waitForURL(/status=active/);
    await expect.poll(ids, POLL).toEqual(['B', 'A', 'C']);
    await page.getByLabel('Search').fill('c');
    await page.getByLabel('Search').press('Enter');
    await page.waitForURL(/search=c/);
    await expect.poll(ids, POLL).toEqual(['C']);
    await shoot(page, 'customers-found');
    await page.getByLabel('Search').fill('nobody');
    await page.getByLabel('Search').press('Enter');
    await expect
      .poll(() => text(page, 'section[aria-labelledby="customers-title"] p.empty'), POLL)
      .toBe('No customer with USD revenue matches "nobody" (Paying).');
  });

  it('shows the revenue view in dark mode without console errors', async () => {
    const dark = await newPage('dark');
    await dark.goto(`${dashboard}/login`);
    await dark.getByLabel('Email').fill(EMAIL);
    await dark.getByLabel('Password').fill(PASSWORD);
    await dark.getByRole('button', { name: 'Sign in' }).click();
    await dark.waitForURL(/\/projects\/revenue-site/);
    await dark.goto(view('revenue'));
    await expect.poll(() => text(dark, '#revenue-mrr'), POLL).toBe('$290.00');
    await shoot(dark, 'revenue-desktop-dark');
  });

  it('shows the cohorts (logo, net and gross MRR retention), the retention curve and LTV, on desktop and phone', async () => {
    await page.goto(view('revenue'));
    // LTV for April: ARPA 96.67 ÷ the mean customer churn of February to April (11.11%) = 870.
    await expect.poll(() => text(page, '#revenue-ltv'), POLL).toBe('$870.00');
    const card = page.locator('section[aria-labelledby="cohorts-title"]');
    const rows = () => tableRows(page.locator('#cohort-table tbody tr'));
    await expect.poll(rows, POLL).toEqual([
      ['Jan 2026', '2', '100%', '100%', '50%', '100%'],
      ['Feb 2026', '1', '100%', '100%', '100%', ''],
    ]);
    expect(await page.locator('#retention-curve canvas').count()).toBe(1);
    await card.getByRole('tab', { name: 'Net MRR' }).click();
    await page.waitForURL(/retention=net_mrr_retention/);
    await expect.poll(rows, POLL).toEqual([
      ['Jan 2026', '2', '100%', '120%', '100%', '126.7%'],
      ['Feb 2026', '1', '100%', '100%', '100%', ''],
    ]);
    await card.getByRole('tab', { name: 'Gross MRR' }).click();
    await expect.poll(rows, POLL).toEqual([
      ['Jan 2026', '2', '100%', '86.7%', '66.7%', '93.3%'],
      ['Feb 2026', '1', '100%', '100%', '100%', ''],
    ]);
    // The cell's title says what is behind it.
    expect(
      await page.locator('#cohort-table tbody tr').first().locator('td').nth(4).getAttribute('title'),
    ).toBe('Apr 2026: 2 paying, MRR $190.00');
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(SHOTS, 'revenue-cohorts-desktop-light.png') });
    for (const [scheme, width] of [
      ['dark', 1280],
      ['light', 390],
      ['dark', 390],
    ] as const) {
      const other = await newPage(scheme, width);
      await other.goto(`${dashboard}/login`);
      await other.getByLabel('Email').fill(EMAIL);
      await other.getByLabel('Password').fill(PASSWORD);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.waitForURL(/\/projects\/revenue-site/);
      await other.goto(view('revenue', `${RANGE}&retention=net_mrr_retention`));
      await expect.poll(() => text(other, '#revenue-ltv'), POLL).toBe('$870.00');
      await expect.poll(() => tableRows(other.locator('#cohort-table tbody tr')), POLL).toHaveLength(2);
      // Nothing wider than the window: the triangle scrolls inside its card.
      expect(
        await other.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      ).toBe(0);
      const cohorts = other.locator('section[aria-labelledby="cohorts-title"]');
      await other.waitForLoadState('networkidle');
      await cohorts.screenshot({
        path: join(SHOTS, `revenue-cohorts-${width === 390 ? 'phone' : 'desktop'}-${scheme}.png`),
      });
      if (width === 390)
        await other
          .locator('.figures')
          .screenshot({ path: join(SHOTS, `revenue-figures-phone-${scheme}.png`) });
    }
  });

  it('switches MRR to days, and shows it converted only once the operator loaded rates', async () => {
    await page.goto(view('revenue'));
    const card = page.locator('section[aria-labelledby="mrr-title"]');
    const points = async () =>
      Object.fromEntries((await tableRows(card.locator('.sr-only tbody tr'))).map((r) => [r[0], r[1]]));
    await expect.poll(() => text(page, '#mrr-title'), POLL).toBe('MRR USD, end of each month');
    expect(await page.getByText('Converted to').count()).toBe(0);
    await card.getByRole('tab', { name: 'Daily' }).click();
    await expect.poll(() => text(page, '#mrr-title'), POLL).toBe('MRR USD, end of each day (UTC)');
    expect(page.url()).toContain('interval=day');
    await expect.poll(async () => Object.keys(await points()).length, POLL).toBe(120);
    // Each month's last day has the monthly figure; the upgrade of 3 February shows on its day.
    expect(await points()).toMatchObject({
      '2026-01-31': '$150.00',
      '2026-02-02': '$150.00',
      '2026-02-03': '$200.00',
      '2026-02-28': '$280.00',
      '2026-03-31': '$250.00',
      '2026-04-30': '$290.00',
    });
    await shoot(page, 'revenue-mrr-daily');

    const file = join(dataDir, 'rates.csv');
    writeFileSync(file, 'month,currency,rate_to_EUR\n2026-01,USD,0.9\n2026-02,USD,0.92\n2026-03,USD,0.925\n');
    await tally(['revenue', 'rates', 'load', file], pipelineEnv({ TALLY_DATA_DIR: dataDir }));
    await page.goto(view('revenue'));
    await page.getByLabel('Converted to EUR', { exact: true }).check();
    await expect
      .poll(() => text(page, '#mrr-title'), POLL)
      .toBe('MRR all currencies converted to EUR, end of each month');
    // 150 × 0.9, 280 × 0.92, 250 × 0.925; April has no rate: USD left out, and said so.
    await expect.poll(points, POLL).toEqual({
      '2026-01': '€135.00',
      '2026-02': '€257.60',
      '2026-03': '€231.25',
      '2026-04': '€0.00 (without USD)',
    });
    expect(await text(page, '.converted-note')).toMatch(
      /^Converted to EUR with the exchange rates loaded by the operator: USD 0\.9 \(2026-01\), USD 0\.92 \(2026-02\), USD 0\.925 \(2026-03\)\. Left out where no rate is loaded \(a gap in the line\): USD\.$/,
    );
    // The whole page is converted, and says so: the cards agree with the chart (April: nothing converted).
    await expect.poll(() => text(page, '#revenue-mrr'), POLL).toBe('€0.00');
    expect(await text(page, '.top-figures .missing-rates')).toBe(
      'Left out where no exchange rate is loaded: USD.',
    );
    expect(await text(page, '#movements-title')).toBe('Movements all currencies converted to EUR, per month');
    await shoot(page, 'revenue-mrr-converted');
    await card.getByRole('tab', { name: 'Daily' }).click();
    await expect
      .poll(() => text(page, '#mrr-title'), POLL)
      .toBe('MRR all currencies converted to EUR, end of each day (UTC)');
    await expect.poll(async () => (await points())['2026-03-31'], POLL).toBe('€231.25');
    await shoot(page, 'revenue-mrr-daily-converted');
    // Both switches are in the URL: a reload (or a shared link) shows the same chart.
    expect(page.url()).toMatch(/interval=day&convert=EUR/);
    await page.reload();
    await expect
      .poll(() => text(page, '#mrr-title'), POLL)
      .toBe('MRR all currencies converted to EUR, end of each day (UTC)');

    // January to March, every month with a rate: every card, chart and table of the page in EUR, the
    // API's converted figures, labelled as converted; the drill-downs (per currency) are not offered.
    await page.goto(view('revenue', 'from=2026-01&to=2026-03&convert=EUR'));
    await expect.poll(() => text(page, '#revenue-mrr'), POLL).toBe('€231.25');
    expect(await text(page, '.converted-label')).toBe(
      "In EUR, converted: every currency at each month's exchange rate.",
    );
    const api = async (path: string) =>
      (await (await page.request.get(`${dashboard}/api/v1/projects/${PROJECT}/revenue/${path}`)).json()) as {
        total: Record<string, string>;
      };
    const range = 'from=2026-01&to=2026-03&convert_to=EUR';
    const attribution = await api(`attribution?${range}`);
    const breakdown = await api(`breakdown?${range}&by=plan`);
    expect(attribution.total.mrr_end).toBe('231.25');
    await expect.poll(() => text(page, '#attribution-table-total-mrr_end'), POLL).toBe('€231.25');
    await expect.poll(() => text(page, '#breakdown-table-total-mrr_end'), POLL).toBe('€231.25');
    expect(await text(page, '#breakdown-table-total-new')).toBe(
      `€${Number(breakdown.total.new).toLocaleString('en-US', { minimumFractionDigits: 2 })}`,
    );
    expect(await text(page, '#attribution-title')).toContain('all currencies converted to EUR');
    expect(await text(page, '#breakdown-title')).toContain('all currencies converted to EUR');
    expect(await text(page, '#cohorts-title')).toContain('all currencies converted to EUR');
    expect(await page.locator('#attribution-table button.cell-link').count()).toBe(0);
    expect(await page.locator('.top-figures button.figure').count()).toBe(0);
    // Every month of the range has its rates: no card of the range leaves a currency out.
    expect(await page.locator('section:not([aria-labelledby="funnel-title"]) .missing-rates').count()).toBe(
      0,
    );
    // The funnel's money converted too (MRR now, cash to date: at the latest rate and each payment's month's,
    // so later payments without a rate are left out and said so): its total row is the API's answer.
    const funnel = (await (
      await page.request.get(
        `${dashboard}/api/v1/projects/${PROJECT}/revenue/funnel?from=2026-01-01&to=2026-03-31&by=channel&convert_to=EUR`,
      )
    ).json()) as {
      currency: string;
      missing_currencies: string[];
      total: { mrr: string; cash_revenue: string };
    };
    expect(funnel.currency).toBe('EUR');
    const euros = (amount: string) =>
      `€${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
    await expect
      .poll(
        async () => (await tableRows(page.locator('#funnel-table tr.total-row'))).at(0)?.slice(4, 6),
        POLL,
      )
      .toEqual([euros(funnel.total.mrr), euros(funnel.total.cash_revenue)]);
    expect(await text(page, '#funnel-title')).toContain('money in all currencies converted to EUR');
    const funnelNote = page.locator('section[aria-labelledby="funnel-title"] .missing-rates');
    expect(funnel.missing_currencies.length).toBeGreaterThan(0);
    expect(await funnelNote.innerText()).toBe(
      `Left out where no exchange rate is loaded: ${funnel.missing_currencies.join(', ')}.`,
    );
    await shoot(page, 'revenue-converted-page');
    // Off again: the picked currency, and the drill-downs back.
    await page.getByLabel('Converted to EUR', { exact: true }).uncheck();
    await expect.poll(() => text(page, '#revenue-mrr'), POLL).toBe('$250.00');
    await expect.poll(() => page.locator('.top-figures button.figure').count(), POLL).toBeGreaterThan(0);
  });

  it('shows a type as stalled once its records stop, while another keeps landing', async () => {
    // Refused requests of the project: an invalid record (400) twice, revenue with a public token (403);
    // and one without a token (401), which has no project and is not shown.
    const refused = [
      { type: 'pageview', data: { url: 42 } },
      { type: 'pageview', data: { url: 43 } },
      { type: 'revenue', data: {} },
    ];
    expect(
      await Promise.all(refused.map(async (r) => (await send(running.url, publicToken, r)).status)),
    ).toEqual([400, 400, 403]);
    expect((await send(running.url, '', refused[0] as { type: string; data: unknown })).status).toBe(401);
    await page.goto(view('health', 'stall=1'));
    await expect.poll(() => page.locator('#health-table').count(), POLL).toBe(1);
    // Identify records keep landing; pageviews and revenue stopped when the example was sent. A type is
    // stalled after a whole minute without records (the threshold asked for in the URL).
    let n = 0;
    const statuses = async () => {
      const identify = {
        type: 'identify',
        data: { visitor_fingerprint: `v_live_${n}`, session_id: `s_live_${n}`, customer_id: `live_${n++}` },
      };
      expect((await send(running.url, publicToken, identify)).status).toBe(202);
      await page.reload();
      await page.locator('#health-table').waitFor();
      return Object.fromEntries(
        (await tableRows(page.locator('#health-table tbody tr'))).map((r) => [r[0], r[1]]),
      );
    };
    // Polled every 2 seconds (each poll also sends the next identify, as a live source would) until a whole
    // minute has passed without pageviews.
    await expect
      .poll(statuses, { timeout: 150_000, interval: 2_000 })
      .toEqual({ pageview: 'Stalled', event: 'Never received', identify: 'Landing', revenue: 'Stalled' });
    expect(await text(page, '#health-alert')).toMatch(
      /pageview records \(none for \d+ min\) and revenue records \(none for \d+ min\) stopped landing/,
    );
    // npm start hands its log to the dashboard: lag of both groups, refusals, nothing unavailable.
    expect(await page.locator('#health-unavailable').count()).toBe(0);
    const lagRows = await tableRows(page.locator('#consumer-lag tbody tr'));
    // A group is listed per topic it has committed in: no event was ever sent.
    expect(lagRows.map((r) => `${r[0]}/${r[1]}`).sort()).toEqual([
      'analytics/identify',
      'analytics/pageview',
      'revenue/revenue',
    ]);
    expect(await text(page, '#oldest-not-landed')).toMatch(
      /^(Every record in the log has landed\.|Oldest record not landed: \d+s old)/,
    );
    await expect.poll(() => text(page, '#refusals-total'), POLL).toBe('3');
    const refusalHeader = await tableRows(page.locator('#refusals thead tr'));
    expect(refusalHeader[0]?.slice(1, 3)).toEqual(['400', '403']);
    // Summed over the hours shown (an hour may turn while the test runs).
    expect(await tableRows(page.locator('#refusals tfoot tr'))).toEqual([['24 hours', '2', '1', '3']]);
    await shoot(page, 'health-stalled');
    expect(consoleErrors).toEqual([]);
  });

  // Last: it lands revenue (in a currency of its own, so the figures above are untouched either way).
  it('lists a figure of many items a page at a time, more on demand', async () => {
    const many = Array.from({ length: 205 }, (_, i) => ({
      type: 'revenue',
      data: {
        visitor_fingerprint: `fp_Z${i % 7}`,
        session_id: `s_Z${i % 7}`,
        customer_id: `Z${i % 7}`,
        amount: 1,
        currency: 'JPY',
        transaction_id: `many_${i}`,
        event_type: 'purchase',
        timestamp: Date.parse('2026-03-01T00:00:00Z') + i * 60_000,
      },
    }));
    for (let i = 0; i < many.length; i += 20) {
      const statuses = await Promise.all(
        many.slice(i, i + 20).map(async (r) => (await send(running.url, secretToken, r)).status),
      );
      expect(statuses).toEqual(statuses.map(() => 202));
    }
    // The records land while the page is opened: the view reads its figures once per load, so it is
    // opened again until the cash card counts all 205 (a first load may come while some are landing).
    await expect
      .poll(
        async () => {
          await page.goto(view('revenue', `${RANGE}&currency=JPY`));
          await page.locator('#revenue-cash').waitFor(POLL);
          return text(page, '#revenue-cash');
        },
        { timeout: 60_000, interval: 500 },
      )
      .toContain('205');
    await page.locator('#revenue-cash').click();
    const dialog = page.getByRole('dialog');
    await expect
      .poll(() => dialog.locator('#drill-total').innerText(), POLL)
      .toBe('205 items, adding up to ¥205');
    expect(await dialog.locator('tbody tr').count()).toBe(200);
    expect(await dialog.locator('.drill-more').innerText()).toBe('200 of 205 listed Show 5 more');
    await dialog.locator('#drill-more').click();
    await expect.poll(() => dialog.locator('tbody tr').count(), POLL).toBe(205);
    expect(await dialog.locator('#drill-more').count()).toBe(0);
    const rows = await tableRows(dialog.locator('tbody tr'));
    expect(rows.at(-1)?.[2]).toBe('many_204');
    expect(rows.map((r) => r[2])).toEqual(many.map((r) => r.data.transaction_id));
    await shoot(page, 'revenue-drilldown-more');
    expect(consoleErrors).toEqual([]);
  });

  it("picks the currency among the project's, with their customers, on Revenue and on Customers", async () => {
    await page.goto(view('revenue', RANGE));
    const options = () => page.locator('select#currency option').allInnerTexts();
    await expect.poll(options, POLL).toContain('JPY (7 customers)');
    // The most used first: JPY's 205 records outnumber the USD ones.
    expect((await options())[0]).toBe('JPY (7 customers)');
    expect(await options()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^USD \(\d+ customers?\)$/)]),
    );
    await page.locator('select#currency').selectOption('JPY');
    await page.waitForURL(/currency=JPY/);
    await expect.poll(() => text(page, '#revenue-cash'), POLL).toContain('205');

    await page.goto(view('customers'));
    await expect.poll(() => text(page, '#customers-title'), POLL).toMatch(/with USD revenue/);
    await page.locator('select#currency').selectOption('JPY');
    await page.waitForURL(/currency=JPY/);
    await expect.poll(() => text(page, '#customers-title'), POLL).toMatch(/^Customers 7 with JPY revenue/);
    await shoot(page, 'customers-currency-jpy');

    // Converted (rates to EUR were loaded above for USD's first months, none for JPY): every customer of
    // every currency, in EUR, the API's list; what has no rate (JPY, USD records of later months) left out
    // and said so.
    await page.getByLabel('Converted to EUR', { exact: true }).check();
    await page.waitForURL(/convert=EUR/);
    const converted = (await (
      await page.request.get(`${dashboard}/api/v1/projects/${PROJECT}/revenue/customers?convert_to=EUR`)
    ).json()) as {
      total: number;
      missing_currencies: string[];
      customers: Array<{ customer_id: string; mrr: string; cash_revenue: string }>;
    };
    expect(converted.missing_currencies).toContain('JPY');
    await expect
      .poll(() => text(page, '#customers-title'), POLL)
      .toBe(`Customers ${converted.total}, every currency converted to EUR, largest MRR first`);
    expect(await text(page, '.converted-note')).toContain(
      `Left out where no exchange rate is loaded: ${converted.missing_currencies.join(', ')}.`,
    );
    const firstMrr = Number(converted.customers[0]?.mrr);
    expect(await page.locator('table tbody tr').first().innerText()).toContain(
      `€${firstMrr.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`,
    );
    await shoot(page, 'customers-converted');

    // A customer's page from the converted list stays converted: its MRR is its row of the list, labelled,
    // with the note; turning it off shows its figures per currency again.
    const first = converted.customers[0] as (typeof converted.customers)[number];
    const money = (amount: string) =>
      `€${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
    const checkConverted = async (p: Page) => {
      await expect.poll(() => text(p, '#customer-mrr-EUR'), POLL).toBe(money(first.mrr));
      // The label as written (its style sets it in capitals).
      expect(await p.locator('.figure-label').textContent()).toBe('MRR (EUR, converted)');
      expect(await text(p, '.figure .change')).toContain(`lifetime cash ${money(first.cash_revenue)}`);
      expect(await text(p, '#customer-converted-note')).toMatch(
        /^In EUR, converted: MRR now at each currency's latest exchange rate/,
      );
    };
    await page.locator('#customers-table tbody tr').first().getByRole('link').click();
    await page.waitForURL(new RegExp(`customer=${first.customer_id}&convert=EUR`));
    await checkConverted(page);
    await shoot(page, 'customer-converted');
    await page.getByLabel('Converted to EUR', { exact: true }).uncheck();
    await expect.poll(() => page.url(), POLL).not.toMatch(/convert=/);
    const plain = (await (
      await page.request.get(`${dashboard}/api/v1/projects/${PROJECT}/revenue/customers/${first.customer_id}`)
    ).json()) as { summaries: Array<{ currency: string }> };
    await expect
      .poll(() => page.locator('.figure-label').allTextContents(), POLL)
      .toEqual(plain.summaries.map((s) => `MRR (${s.currency})`));
    expect(await page.locator('#customer-converted-note').count()).toBe(0);
    for (const [scheme, width] of [
      ['light', 1440],
      ['dark', 1440],
      ['light', 390],
      ['dark', 390],
    ] as const) {
      const other = await newPage(scheme, width);
      await other.goto(`${dashboard}/login`);
      await other.getByLabel('Email').fill(EMAIL);
      await other.getByLabel('Password').fill(PASSWORD);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.waitForURL(/\/projects\/revenue-site/);
      await other.goto(view('customers', `customer=${first.customer_id}&convert=EUR`));
      await checkConverted(other);
      expect(
        await other.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      ).toBe(0);
      await other.waitForLoadState('networkidle');
      await other
        .locator('section[aria-labelledby="customer-title"]')
        .screenshot({ path: join(SHOTS, `customer-converted-${width}-${scheme}.png`) });
    }
    expect(consoleErrors).toEqual([]);
  });

  it("draws the project's notes on the revenue charts, monthly and daily", async () => {
    const env = pipelineEnv({ TALLY_DATA_DIR: dataDir });
    await tally(['annotations', 'add', '--project', PROJECT, '--date', '2026-02-15', 'Pricing change'], env);
    await page.goto(view('revenue'));
    const mrr = page.locator('section[aria-labelledby="mrr-title"] .chart .annotation-marker');
    const movements = page.locator('section[aria-labelledby="movements-title"] .chart .annotation-marker');
    await expect.poll(() => mrr.count(), POLL).toBe(1);
    expect(await mrr.getAttribute('aria-label')).toBe('Note: Pricing change');
    expect(await movements.count()).toBe(1);
    // On February's point of each: the marker's left is that of the second of four months.
    const box = async (locator: Locator) => (await locator.boundingBox()) as { x: number };
    const overOf = async (marker: Locator) =>
      (await marker.locator('xpath=..').boundingBox()) as { x: number; width: number };
    const share = async (marker: Locator) => {
      const over = await overOf(marker);
      return ((await box(marker)).x - over.x) / over.width;
    };
    expect(await share(mrr)).toBeGreaterThan(0.25);
    expect(await share(mrr)).toBeLessThan(0.5);
    await page.locator('section[aria-labelledby="mrr-title"]').getByRole('tab', { name: 'Daily' }).click();
    await expect.poll(() => text(page, '#mrr-title'), POLL).toMatch(/end of each day/);
    await expect.poll(() => mrr.count(), POLL).toBe(1);
    await mrr.hover();
    await expect.poll(() => mrr.locator('.annotation-tip').isVisible(), POLL).toBe(true);
    await shoot(page, 'revenue-annotations');
    expect(consoleErrors).toEqual([]);
  });
});
