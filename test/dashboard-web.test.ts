// The dashboard's web app in real headless Chromium (Debian's, driven by playwright-core) against npm start's
// process: docs/traffic.md's worked example sent through /api/ingest and landed by the real consumers, a user
// who sets a password through the link `tally users add` prints and signs in, the exact figures on the page,
// a filter that changes every panel and lives in the URL, a range change, a CSV export, goals and funnels
// defined in the app, share links opened signed out (one with a password, neither showing or requesting
// revenue), an empty project's install guide, and no console errors. What a new user trips over: a snippet
// never carries a token's prefix, every view fits a phone (the details dialog keeps its names), today's hours
// to come are not drawn and the running one is marked, one failing request stays in its panel with a Retry,
// legends show a figure before any hover, details dialogs are named by their list and searchable, device
// types read capitalised, and a project with traffic but no revenue shows how to send revenue. Screenshots
// of the main views, light and dark, desktop and phone, go to test-output/dashboard-web/ (git-ignored) to be
// looked at.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium } from './support/browser.ts';
import { eventually, ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'worked';
const EMPTY = 'empty-site';
/** Traffic (101 pages: more than a details dialog lists) and no revenue. */
const TRAFFIC_ONLY = 'traffic-only';
const EMAIL = 'owner@example.com';
const PASSWORD = 'a long enough password';
/** Two days ago (UTC, the project's time zone): inside "Last 7 days", outside "Today". */
const DAY = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
const at = (time: string) => Date.parse(`${DAY}T${time}:00Z`);
const DESKTOP = { width: 1280, height: 900 };
/** How long a poll of the page waits for what it expects (the first queries of a fresh chDB can be slow). */
const POLL = { timeout: 20_000, interval: 100 };
const PHONE = { width: 390, height: 844 };
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** A day as the chart labels it: "24 Nov". */
const dayLabel = (day: string) => `${Number(day.slice(8))} ${MONTHS[Number(day.slice(5, 7)) - 1]}`;
const addDays = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

let browser: Browser;
let running: TallyProcess;
let dashboard: string;
let readKey: string;
let signInToken: string;
let trafficOnlySecret: string;
const contexts: BrowserContext[] = [];
/** Console errors and uncaught exceptions of every page, with the page's URL. */
const consoleErrors: string[] = [];

async function newPage(
  options: {
    colorScheme?: 'light' | 'dark';
    viewport?: typeof DESKTOP;
    bypassCSP?: boolean;
    /** Console errors this page is meant to cause (the answers a test makes fail on purpose). */
    expectedErrors?: RegExp;
  } = {},
) {
  const context = await browser.newContext({
    bypassCSP: options.bypassCSP ?? false,
    locale: 'en-US',
    timezoneId: 'America/Los_Angeles', // not the project's zone: the page must not use the browser's
    colorScheme: options.colorScheme ?? 'light',
    viewport: options.viewport ?? DESKTOP,
    acceptDownloads: true,
  });
  contexts.push(context);
  return watch(await context.newPage(), options.expectedErrors);
}

/** Records the page's console errors (but those it is meant to cause) and uncaught exceptions. */
function watch(page: Page, expectedErrors?: RegExp): Page {
  page.on('console', (message) => {
    const line = `${message.text()} (${message.location().url})`;
    if (message.type() === 'error' && !expectedErrors?.test(line)) consoleErrors.push(line);
  });
  page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: uncaught ${error.message}`));
  return page;
}

/**
 * Another tab of a signed-in browser (`signedIn`'s), dark or light, at a phone's or a desktop's size: the
 * dashboard allows 10 sign-in attempts per 15 minutes and address, which the tests would otherwise use up.
 */
async function newTab(
  signedIn: Page,
  options: { colorScheme?: 'light' | 'dark'; viewport?: typeof DESKTOP; expectedErrors?: RegExp } = {},
): Promise<Page> {
  const tab = watch(await signedIn.context().newPage(), options.expectedErrors);
  await tab.emulateMedia({ colorScheme: options.colorScheme ?? 'light' });
  await tab.setViewportSize(options.viewport ?? DESKTOP);
  return tab;
}

async function shoot(page: Page, name: string) {
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** What axe-core (the accessibility engine of Lighthouse and Chrome's tools) finds wrong against WCAG 2 A/AA. */
async function axeViolations(page: Page): Promise<string[]> {
  // The page once settled: a panel that is loading is dimmed (.is-stale), which axe measures below AA
  // contrast, and on a slow machine some still load after the network has been idle.
  await page.waitForFunction("document.querySelector('.is-stale') === null", undefined, { timeout: 20_000 });
  await page.addScriptTag({ path: AXE });
  const result = (await page.evaluate(
    "axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })",
  )) as { violations: { id: string; nodes: { target: string[] }[] }[]; passes: { id: string }[] };
  expect(result.passes.map((p) => p.id)).toEqual(expect.arrayContaining(['color-contrast', 'button-name']));
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function signIn(page: Page) {
  await page.goto(`${dashboard}/login`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${dashboard}/`);
}

/** The rows of a table as [label, ...cells], as a reader sees them. */
function tableRows(rows: Locator): Promise<string[][]> {
  return rows.evaluateAll((elements) =>
    elements.map((row) =>
      Array.from((row as unknown as { cells: ArrayLike<{ innerText: string }> }).cells, (cell) =>
        cell.innerText.trim(),
      ),
    ),
  );
}

/** The rows of a panel's list, once loaded. */
const rowsOf = (page: Page, panel: string) =>
  tableRows(page.locator(`section[data-panel="${panel}"] table.bars:not(.is-stale) tbody tr`));

/**
 * The figures at the top of the page, once loaded. Read them through `expect.poll`: right after a navigation
 * the page may still show the previous view's figures for a render.
 */
async function figures(page: Page) {
  await page.locator('.top-figures:not(.is-stale)').waitFor();
  const ids = ['visitors', 'visits', 'pageviews', 'views-per-visit', 'bounce-rate', 'visit-duration'];
  return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await text(page, `#${id}`)])));
}

const pagePath = (project: string, query = `period=custom&from=${DAY}&to=${DAY}`) =>
  `/projects/${project}${query ? `?${query}` : ''}`;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await buildWebIfStale();
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  const publicToken = (await store.create(PROJECT, 'public')).token;
  const secretToken = (await store.create(PROJECT, 'secret')).token;
  readKey = (await store.create(PROJECT, 'read')).token;
  await store.create(EMPTY, 'public');
  const trafficOnlyPublic = (await store.create(TRAFFIC_ONLY, 'public')).token;
  trafficOnlySecret = (await store.create(TRAFFIC_ONLY, 'secret')).token;
  const trafficOnlyRead = (await store.create(TRAFFIC_ONLY, 'read')).token;
  const printed = await tally(
    ['users', 'add', EMAIL, '--project', PROJECT, '--project', EMPTY, '--project', TRAFFIC_ONLY],
    pipelineEnv({ TALLY_DATA_DIR: dataDir }),
  );
  signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  expect(signInToken).toBeTruthy();
  [browser, running] = await Promise.all([launchChromium(), startTallyProcess({ TALLY_DATA_DIR: dataDir })]);
  dashboard = running.endpoints.dashboardUrl as string;

  // docs/traffic.md's worked example: v1 direct (/, /pricing, then /signup 50 minutes later), v2 from Google,
  // v3 from the newsletter with the event signup, identified as C, who starts a 30 USD subscription.
  const pageview = (visitor: string, time: string, path: string, extra: Record<string, unknown> = {}) => ({
    type: 'pageview',
    data: {
      visitor_fingerprint: visitor,
      session_id: `s_${visitor}`,
      url: `https://shop.example${path}`,
      path,
      screen_width: 1440,
      timestamp: at(time),
      ...extra,
    },
  });
  const records = [
    pageview('v1', '10:00', '/'),
    pageview('v1', '10:10', '/pricing'),
    pageview('v1', '11:00', '/signup'),
    pageview('v2', '10:05', '/blog/a', { referrer: 'https://www.google.com/', screen_width: 390 }),
    pageview('v3', '12:00', '/pricing', {
      url: 'https://shop.example/pricing?utm_source=newsletter&utm_medium=email',
      utm_source: 'newsletter',
      utm_medium: 'email',
    }),
    {
      type: 'event',
      data: {
        visitor_fingerprint: 'v3',
        session_id: 's_v3',
        event_name: 'signup',
        event_data: { plan: 'pro' },
        timestamp: at('12:02'),
      },
    },
    {
      type: 'identify',
      data: { visitor_fingerprint: 'v3', session_id: 's_v3', customer_id: 'C', timestamp: at('12:03') },
    },
  ];
  for (const record of records) expect((await send(running.url, publicToken, record)).status).toBe(202);
  const revenue = {
    type: 'revenue',
    data: {
      visitor_fingerprint: 'v3',
      session_id: 's_v3',
      customer_id: 'C',
      amount: 30,
      currency: 'USD',
      transaction_id: 'in_web_1',
      event_type: 'subscription',
      mrr_impact: 30,
      is_recurring: true,
      timestamp: at('12:05'),
    },
  };
  expect((await send(running.url, secretToken, revenue)).status).toBe(202);
  // A site with traffic and no revenue: one visitor reading 101 pages, one more than a details dialog lists.
  const reads = Array.from({ length: 101 }, (_, i) =>
    pageview('v_reader', `13:${String(Math.floor(i / 4)).padStart(2, '0')}`, `/p-${i}`),
  );
  for (let i = 0; i < reads.length; i += 20) {
    const statuses = await Promise.all(
      reads.slice(i, i + 20).map(async (r) => (await send(running.url, trafficOnlyPublic, r)).status),
    );
    expect(statuses).toEqual(statuses.map(() => 202));
  }
  await eventually(30_000, 'the worked example landing in visits', async () => {
    const res = await fetch(`${dashboard}/api/v1/projects/${PROJECT}/traffic/summary?from=${DAY}&to=${DAY}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    const body = (await res.json()) as { pageviews: number; events: number };
    return res.status === 200 && body.pageviews === 5 && body.events === 1;
  });
  await eventually(30_000, 'the 101 pages landing', async () => {
    const res = await fetch(
      `${dashboard}/api/v1/projects/${TRAFFIC_ONLY}/traffic/summary?from=${DAY}&to=${DAY}`,
      {
        headers: { authorization: `Bearer ${trafficOnlyRead}` },
      },
    );
    return res.status === 200 && ((await res.json()) as { pageviews: number }).pageviews === 101;
  });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await running?.stop('SIGTERM');
});

describe('the dashboard in Chromium', () => {
  let page: Page;
  /** Share links made in the app: without password, and with one. */
  const shares: { open?: string; locked?: string } = {};

  it('serves the app with its cache headers: the page revalidated, hashed assets immutable', async () => {
    const html = await fetch(`${dashboard}/projects/${PROJECT}`);
    expect(html.headers.get('cache-control')).toBe('no-cache');
    const body = await html.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(body)?.[1] as string;
    const asset = await fetch(`${dashboard}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('sets the password through the sign-in link, signs out and signs in again', async () => {
    page = await newPage();
    await page.goto(`${dashboard}/set-password#token=${signInToken}`);
    expect(new URL(page.url()).hash).toBe(''); // the token leaves the address bar once read
    await shoot(page, 'set-password-desktop-light');
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    // Two projects: the list of them.
    await page.getByRole('link', { name: PROJECT }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login$/);

    await page.goto(`${dashboard}${pagePath(PROJECT)}`);
    await page.waitForURL(/\/login\?next=/); // signed out: sign in first, then back here
    await shoot(page, 'sign-in-desktop-light');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${dashboard}${pagePath(PROJECT)}`);
  });

  it("shows the worked example's figures exactly", async () => {
    await expect
      .poll(() => figures(page), POLL)
      .toEqual({
        visitors: '3',
        visits: '4',
        pageviews: '5',
        'views-per-visit': '1.25',
        'bounce-rate': '50%',
        'visit-duration': '3m 00s', // (600 + 0 + 0 + 120) s / 4 visits
      });
    expect(await text(page, '#current-visitors')).toBe('0');
    expect(await text(page, '#visitor-caveat')).toContain('rotates daily');
    await expect
      .poll(() => rowsOf(page, 'sources'), POLL)
      .toEqual([
        ['Direct', '2', '1', '50%'],
        ['Email', '1', '1', '25%'],
        ['Organic Search', '1', '1', '25%'],
      ]);
    await expect
      .poll(() => rowsOf(page, 'pages'), POLL)
      .toEqual([
        ['/pricing', '2', '2', '40%'],
        ['/', '1', '1', '20%'],
        ['/blog/a', '1', '1', '20%'],
        ['/signup', '1', '1', '20%'],
      ]);
    await page.locator('section[data-panel="pages"]').getByRole('tab', { name: 'Entry pages' }).click();
    await expect
      .poll(() => rowsOf(page, 'pages'), POLL)
      .toEqual([
        ['/', '1', '1', '25%'],
        ['/blog/a', '1', '1', '25%'],
        ['/pricing', '1', '1', '25%'],
        ['/signup', '1', '1', '25%'],
      ]);
    await expect.poll(() => rowsOf(page, 'events'), POLL).toEqual([['signup', '1', '1', '100%']]);
    await expect.poll(() => rowsOf(page, 'devices'), POLL).toEqual([['Safari', '4', '3', '100%']]);
    await page.locator('section[data-panel="devices"]').getByRole('tab', { name: 'Screens' }).click();
    await expect
      .poll(() => rowsOf(page, 'devices'), POLL)
      .toEqual([
        ['Desktop', '3', '2', '75%'],
        ['Mobile', '1', '1', '25%'],
      ]);
    await shoot(page, 'traffic-desktop-light');
  });

  it("lists the keys of the events' properties, and the values of the key chosen", async () => {
    const events = page.locator('section[data-panel="events"]');
    await events.getByRole('tab', { name: 'Properties' }).click();
    await expect.poll(() => rowsOf(page, 'events'), POLL).toEqual([['plan', '1', '1', '100%']]);
    await events.getByRole('button', { name: 'Show the values of property plan' }).click();
    await expect.poll(() => rowsOf(page, 'events'), POLL).toEqual([['pro', '1', '1', '100%']]);
    await events.getByRole('button', { name: 'All keys' }).click();
    await expect.poll(() => rowsOf(page, 'events'), POLL).toEqual([['plan', '1', '1', '100%']]);
    await events.getByRole('tab', { name: 'Events' }).click();
    await expect.poll(() => rowsOf(page, 'events'), POLL).toEqual([['signup', '1', '1', '100%']]);
  });

  it('sorts a list by a column, and shows every column in its details', async () => {
    const sources = page.locator('section[data-panel="sources"]');
    await sources.getByRole('button', { name: 'Channel', exact: true }).click(); // by value, A to Z
    await expect
      .poll(() => rowsOf(page, 'sources').then((rows) => rows.map((r) => r[0])), POLL)
      .toEqual(['Direct', 'Email', 'Organic Search']);
    await sources.getByRole('button', { name: 'Channel', exact: true }).click(); // Z to A
    await expect
      .poll(() => rowsOf(page, 'sources').then((rows) => rows.map((r) => r[0])), POLL)
      .toEqual(['Organic Search', 'Email', 'Direct']);
    expect(await sources.locator('th[aria-sort]').innerText()).toContain('Channel');
    await sources.getByRole('button', { name: 'Details' }).click();
    const dialog = page.getByRole('dialog', { name: 'Channels' });
    await expect
      .poll(() => tableRows(dialog.locator('table.bars:not(.is-stale) tbody tr')), POLL)
      .toEqual([
        // channel, visits, visitors, pageviews, bounce rate, duration, share
        ['Direct', '2', '1', '3', '50%', '5m 00s', '50%'],
        ['Email', '1', '1', '1', '0%', '2m 00s', '25%'],
        ['Organic Search', '1', '1', '1', '100%', '0s', '25%'],
      ]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('names each details dialog by its list, never the panel and the tab twice ("Sources: Sources")', async () => {
    const expected: [string, string, string][] = [
      ['sources', 'Channels', 'Channels'],
      ['sources', 'Sources', 'Sources'],
      ['sources', 'Referrers', 'Referrers'],
      ['sources', 'Campaigns', 'UTM sources'],
      ['pages', 'Top pages', 'Top pages'],
      ['pages', 'Entry pages', 'Entry pages'],
      ['pages', 'Exit pages', 'Exit pages'],
      ['locations', '', 'Countries'],
      ['devices', 'Browsers', 'Browsers'],
      ['devices', 'Systems', 'Operating systems'],
      ['devices', 'Devices', 'Device types'],
      ['devices', 'Screens', 'Screen sizes'],
      ['events', 'Events', 'Custom events'],
      ['events', 'Properties', 'Event property keys'],
    ];
    const panels = ['sources', 'pages', 'devices', 'events'];
    const selectedTab = (panel: string) =>
      page.locator(`section[data-panel="${panel}"] [role="tab"][aria-selected="true"]`).innerText();
    const before = await Promise.all(panels.map(selectedTab));
    const titles: string[] = [];
    for (const [panel, tab, _] of expected) {
      const section = page.locator(`section[data-panel="${panel}"]`);
      if (tab) await section.getByRole('tab', { name: tab, exact: true }).click();
      await section.getByRole('button', { name: 'Details' }).click();
      const dialog = page.locator('dialog[open]');
      titles.push(await dialog.locator('h2').innerText());
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    }
    expect(titles).toEqual(expected.map((e) => e[2]));
    // The tabs as they were, for the tests that follow.
    for (const [i, panel] of panels.entries())
      await page
        .locator(`section[data-panel="${panel}"]`)
        .getByRole('tab', { name: before[i], exact: true })
        .click();
  });

  it('lists in a UTM tab the visits that carried the parameter, and counts the others below, not as "(not set)"', async () => {
    const section = page.locator('section[data-panel="sources"]');
    const before = await section.locator('[role="tab"][aria-selected="true"]').innerText();
    await section.getByRole('tab', { name: 'Campaigns', exact: true }).click();
    const list = section.locator('table.bars[data-dimension="utm_source"]:not(.is-stale)');
    await expect.poll(() => tableRows(list.locator('tbody tr')), POLL).toHaveLength(1);
    expect((await tableRows(list.locator('tbody tr')))[0]?.[0]).toBe('newsletter');
    await section.screenshot({ path: join(SHOTS, 'utm-sources-desktop-light.png') });
    expect(await section.locator('.unset-note').innerText()).toMatch(
      /^Not listed: [1-9]\d* visits without it\.$/,
    );
    await section.getByRole('tab', { name: before, exact: true }).click();
  });

  it('searches the rows of a details dialog, and says when the list has more than it shows', async () => {
    // The pages panel shows its entry pages (an earlier test chose them).
    await page.locator('section[data-panel="pages"]').getByRole('button', { name: 'Details' }).click();
    const dialog = page.getByRole('dialog', { name: 'Entry pages' });
    const names = () =>
      tableRows(dialog.locator('table.bars:not(.is-stale) tbody tr')).then((rows) => rows.map((r) => r[0]));
    await expect.poll(names, POLL).toEqual(['/', '/blog/a', '/pricing', '/signup']);
    await dialog.getByLabel('Search').fill('PRI');
    await expect.poll(names, POLL).toEqual(['/pricing']);
    expect(await dialog.locator('#search-note').innerText()).toBe('1 of 4 rows match.');
    await dialog.getByLabel('Search').fill('nothing like it');
    await expect.poll(names, POLL).toEqual([]);
    expect(await dialog.locator('.empty').innerText()).toBe('No row matches nothing like it.');
    await dialog.getByRole('button', { name: 'Close' }).click(); // Escape would first clear the search
    await dialog.waitFor({ state: 'hidden' });

    // 101 pages: the dialog lists 100, and its search says it looks at those only.
    const other = await newTab(page);
    await other.goto(`${dashboard}${pagePath(TRAFFIC_ONLY)}`);
    await other.locator('section[data-panel="pages"]').getByRole('button', { name: 'Details' }).click();
    const big = other.getByRole('dialog', { name: 'Top pages' });
    await expect.poll(() => big.locator('table.bars:not(.is-stale) tbody tr').count(), POLL).toBe(100);
    expect(await big.locator('#search-note').innerText()).toBe(
      'The search looks only at the 100 rows shown, the top ones of the list as sorted; the CSV export has every row.',
    );
    await big.getByLabel('Search').fill('/p-10');
    const shown = await tableRows(big.locator('tbody tr'));
    expect(shown.length).toBeGreaterThan(0);
    for (const row of shown) expect(row[0]).toContain('/p-10');
    expect(await big.locator('#search-note').innerText()).toMatch(
      new RegExp(`^${shown.length} of 100 rows match\\. The search looks only at the 100 rows shown`),
    );
    await big.screenshot({ path: join(SHOTS, 'details-search-desktop-light.png') });
  });

  it('shows device types capitalised, and filters by the value as stored', async () => {
    const devices = page.locator('section[data-panel="devices"]');
    const before = await devices.locator('[role="tab"][aria-selected="true"]').innerText();
    await devices.getByRole('tab', { name: 'Devices', exact: true }).click();
    await expect.poll(() => rowsOf(page, 'devices'), POLL).toEqual([['Desktop', '4', '3', '100%']]);
    await page.getByRole('button', { name: 'Filter by device type Desktop' }).click();
    await page.waitForURL(/filters=device%3D%3Ddesktop/); // the stored value: what the API filters on
    expect(await page.locator('.chip').innerText()).toContain('Device type is Desktop');
    await expect.poll(() => figures(page), POLL).toMatchObject({ visitors: '3', visits: '4' });
    await page.getByRole('button', { name: 'Remove filter: Device type is Desktop' }).click();
    await page.waitForURL((u) => !u.search.includes('filters'));
    await devices.getByRole('tab', { name: before, exact: true }).click();
  });

  it('exports a list as CSV', async () => {
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export Channels as CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe(`${PROJECT}-channel-${DAY}-${DAY}.csv`);
    const csv = readFileSync((await file.path()) as string, 'utf8');
    expect(csv.split('\r\n').filter(Boolean)).toEqual([
      'value,visits,visitors,pageviews,bounce_rate,visit_duration_s,share',
      'Direct,2,1,3,0.5,300,0.5',
      'Email,1,1,1,0,120,0.25',
      'Organic Search,1,1,1,1,0,0.25',
    ]);
  });

  it('filters every panel by a clicked row, and keeps the filter in the URL', async () => {
    await page.getByRole('button', { name: 'Filter by channel Direct' }).click();
    await page.waitForURL(/filters=channel%3D%3DDirect/);
    // v1 alone: 2 visits, /, /pricing and /signup; no event.
    await expect
      .poll(() => figures(page), POLL)
      .toMatchObject({
        visitors: '1',
        visits: '2',
        pageviews: '3',
        'bounce-rate': '50%',
      });
    await expect.poll(() => rowsOf(page, 'sources'), POLL).toEqual([['Direct', '2', '1', '100%']]);
    await expect
      .poll(() => rowsOf(page, 'pages').then((rows) => rows.map((r) => r[0])), POLL)
      .toEqual(['/', '/signup']);
    await expect.poll(() => rowsOf(page, 'devices'), POLL).toEqual([['Desktop', '2', '1', '100%']]);
    await expect
      .poll(() => page.locator('section[data-panel="events"] .empty').innerText(), POLL)
      .toBe('No data for this range.');
    await shoot(page, 'traffic-filtered-desktop-light');

    // The URL alone brings the same view back (a bookmark, a link sent to someone).
    const url = page.url();
    const again = await page.context().newPage(); // the same user, in another tab
    await again.goto(url);
    await expect
      .poll(() => figures(again), POLL)
      .toMatchObject({ visitors: '1', visits: '2', pageviews: '3' });
    expect(await again.locator('.chip').innerText()).toContain('Channel is Direct');
    await again.close();

    await page.getByRole('button', { name: 'Remove filter: Channel is Direct' }).click();
    await page.waitForURL((u) => !u.search.includes('filters'));
    await expect
      .poll(() => figures(page), POLL)
      .toMatchObject({ visitors: '3', visits: '4', pageviews: '5' });
  });

  it("suggests the dimension's top values in the filter dialog; a value picked is the filter", async () => {
    await page.getByRole('button', { name: '+ Filter' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a filter' });
    await dialog.getByLabel('Dimension').selectOption('source');
    const suggested = dialog.getByRole('list', { name: 'Top values' }).getByRole('button');
    await expect.poll(() => suggested.allInnerTexts(), POLL).toContain('newsletter');
    await shoot(page, 'filter-suggestions-desktop-light');
    await suggested.filter({ hasText: 'newsletter' }).click();
    expect(await dialog.getByLabel(/^Values/).inputValue()).toBe('newsletter');
    await dialog.getByRole('button', { name: 'Apply filter' }).click();
    await page.waitForURL(/filters=source%3D%3Dnewsletter/);
    await expect.poll(() => figures(page), POLL).toMatchObject({ visitors: '1', visits: '1' });
    await page.getByRole('button', { name: 'Remove filter: Source is newsletter' }).click();
    await page.waitForURL((u) => !u.search.includes('filters'));
  });

  it('changes the range', async () => {
    await page.getByLabel('Range', { exact: true }).selectOption('7d');
    await page.waitForURL(/period=7d/);
    await expect
      .poll(() => figures(page), POLL)
      .toMatchObject({ visitors: '3', visits: '4', pageviews: '5' });
    await page.getByLabel('Range', { exact: true }).selectOption('today');
    await page.waitForURL(/period=today/);
    await expect
      .poll(() => figures(page), POLL)
      .toMatchObject({ visitors: '0', visits: '0', pageviews: '0' });
    await page.locator('output.notice').waitFor();
    await page.getByLabel('Range', { exact: true }).selectOption('custom');
    await page.getByLabel('From', { exact: true }).fill(DAY);
    await page.getByLabel('To', { exact: true }).fill(DAY);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(new RegExp(`from=${DAY}&to=${DAY}`));
    await expect
      .poll(() => figures(page), POLL)
      .toMatchObject({ visitors: '3', visits: '4', pageviews: '5' });
  });

  it('draws today by hour up to now: the hours to come left out (not zeros), the running one dashed and said so', async () => {
    const today = await newTab(page);
    await today.goto(`${dashboard}/projects/${PROJECT}?period=today`);
    const table = today.locator('section[aria-labelledby="chart-title"] .sr-only tbody tr');
    // The project's zone is UTC: the hour now, there.
    const expected = () => {
      const hour = new Date().getUTCHours();
      return Array.from({ length: 24 }, (_, h) => (h < hour ? '0' : h === hour ? '0 so far' : 'not yet'));
    };
    await expect.poll(async () => (await tableRows(table)).map((r) => r[1]), POLL).toEqual(expected());
    const hour = new Date().getUTCHours();
    const clock = (h: number) => `${String(h).padStart(2, '0')}:00`;
    expect(await today.locator('#chart-partial-note').innerText()).toBe(
      `This hour (${clock(hour)}) is not over: its figure so far is drawn dashed${hour < 23 ? ', and the hours still to come are not drawn' : ''}.`,
    );
    expect(await today.locator('#partial-caveat').innerText()).toBe(
      'Today is not over: the changes compare it so far with the whole previous period.',
    );
    // Away from the chart, its legend shows the last hour that is over, not "—".
    const legend = today.locator('.chart .u-legend .u-series td.u-value');
    if (hour > 0) {
      expect(await legend.nth(0).innerText()).toBe(clock(hour - 1));
      expect(await legend.nth(1).innerText()).toBe('0');
    }
    await shoot(today, 'traffic-today-desktop-light');

    // By day, the last day is today: marked too.
    await today.goto(`${dashboard}/projects/${PROJECT}?period=7d`);
    await expect
      .poll(() => today.locator('#chart-partial-note').innerText(), POLL)
      .toBe(
        `Today (${dayLabel(new Date().toISOString().slice(0, 10))}) is not over: its figure so far is drawn dashed.`,
      );
    // A range that is over has no note.
    await today.goto(`${dashboard}${pagePath(PROJECT)}`);
    await figures(today);
    await today.waitForLoadState('networkidle');
    expect(await today.locator('#chart-partial-note').count()).toBe(0);
    expect(await today.locator('#partial-caveat').count()).toBe(0);
  });

  it('shows a figure in the chart legend before any hover: the last bucket that is over', async () => {
    const before = addDays(DAY, -1);
    await page.goto(
      `${dashboard}${pagePath(PROJECT, `period=custom&from=${before}&to=${DAY}&interval=day`)}`,
    );
    const legend = page.locator('.chart .u-legend .u-series');
    type Row = { style: { display: string }; querySelector(s: string): { innerText: string } };
    const values = () =>
      legend.evaluateAll((rows) =>
        (rows as unknown as Row[])
          .filter((row) => row.style.display !== 'none') // the running bucket's own row, hidden
          .map((row) => row.querySelector('.u-value').innerText),
      );
    // Date, unique visitors, the previous period's (the two days before).
    await expect.poll(values, POLL).toEqual([dayLabel(DAY), '3', `0 (${dayLabel(addDays(DAY, -2))})`]);
    await page.locator('.chart').scrollIntoViewIfNeeded();
    await shoot(page, 'traffic-legend-desktop-light');
  });

  it('keeps a failing request to its panel, with its message and a Retry that recovers it', async () => {
    const failing = await newTab(page, {
      expectedErrors: /status of 500 .*\/traffic\/(summary|breakdown\/country)\?/,
    });
    let broken = true;
    const fail = (what: string) => (url: URL) => broken && url.pathname.endsWith(what);
    for (const what of ['/traffic/summary', '/traffic/breakdown/country'])
      await failing.route(fail(what), (route) =>
        route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"boom"}' }),
      );
    await failing.goto(`${dashboard}${pagePath(PROJECT)}`);
    const top = failing.locator('.top-figures [role="alert"]');
    await expect
      .poll(() => top.locator('p').innerText(), POLL)
      .toBe('The top figures could not be loaded. The dashboard could not answer. Try again in a moment.');
    expect(await top.getByRole('button', { name: 'Retry' }).isVisible()).toBe(true);
    const countries = failing.locator('section[data-panel="locations"] [role="alert"]');
    await expect
      .poll(() => countries.innerText(), POLL)
      .toMatch(/^Countries could not be loaded\. The dashboard could not answer/);
    // The rest of the page works.
    await expect.poll(() => rowsOf(failing, 'sources').then((rows) => rows.length), POLL).toBe(3);
    await expect.poll(() => rowsOf(failing, 'pages').then((rows) => rows.length), POLL).toBe(4);
    await failing.locator('.chart canvas').first().waitFor();
    await shoot(failing, 'panel-errors-desktop-light');

    broken = false;
    await top.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => figures(failing), POLL).toMatchObject({ visitors: '3', visits: '4' });
    await countries.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => rowsOf(failing, 'locations'), POLL).toEqual([['(unknown)', '4', '3', '100%']]);
    expect(await failing.locator('[role="alert"]').count()).toBe(0);
  });

  it('defines a goal and a funnel in the app and shows their conversions', async () => {
    const goals = page.locator('section[data-panel="goals"]');
    await goals.getByRole('button', { name: '+ Add goal' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a goal' });
    await dialog.getByLabel('Event name').fill('signup');
    await dialog.getByRole('button', { name: 'Add goal' }).click();
    await expect.poll(() => rowsOf(page, 'goals'), POLL).toEqual([['signup', '1', '1', '33.3%', '×']]);

    await goals.getByRole('tab', { name: 'Funnels' }).click();
    await goals.getByRole('button', { name: '+ Add funnel' }).click();
    const form = page.getByRole('dialog', { name: 'Add a funnel' });
    await form.getByLabel('Name', { exact: true }).fill('Pricing to signup');
    const steps = form.locator('fieldset');
    await steps.nth(0).getByLabel('Reached by').selectOption('page');
    await steps.nth(0).getByLabel('Page path').fill('/pricing');
    await steps.nth(1).getByLabel('Event name').fill('signup');
    await form.getByRole('button', { name: 'Add funnel' }).click();
    await expect
      .poll(() => rowsOf(page, 'goals'), POLL)
      .toEqual([
        ['1. /pricing', '2', '—', '100%'],
        ['2. signup', '1', '50%', '50%'],
      ]);
  });

  it('creates share links in the settings', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Share links' }).waitFor();
    // Every link made on the page stays shown, the newest first: a second one does not hide the first.
    const links = () => page.locator('output.created-shares .snippet code').allInnerTexts();
    const create = async (name: string, password?: string) => {
      const before = (await links()).length;
      await page.getByLabel(/^Name/).fill(name);
      if (password) await page.getByLabel(/^Password/).fill(password);
      await page.getByRole('button', { name: 'Create share link' }).click();
      await expect.poll(async () => (await links()).length, POLL).toBe(before + 1);
      const url = (await links())[0] ?? '';
      expect(url).toMatch(/\/share\/shr_/);
      await page.getByRole('cell', { name }).waitFor();
      return url;
    };
    shares.open = await create('Public board');
    shares.locked = await create('Investors', 'open sesame please');
    expect(await links()).toEqual([shares.locked, shares.open]);
    expect(
      await page
        .getByRole('button', { name: 'Copy' })
        .and(page.locator('output.created-shares button'))
        .count(),
    ).toBe(2);
    await shoot(page, 'settings-created-shares-desktop-light');
  });

  it("never puts a token's first characters in a snippet: a placeholder until a whole new token is made", async () => {
    const install = page.locator('.install');
    const hint = await install.locator('#token-hidden code').first().innerText(); // "pub_uiTx…"
    expect(hint).toMatch(/^pub_/);
    const snippets = () => install.locator('.snippet code').allInnerTexts();
    for (const snippet of await snippets()) {
      expect(snippet).not.toContain(hint.replace(/…$/, ''));
      expect(snippet).toContain('YOUR_PUBLIC_TOKEN');
    }
    expect(await install.locator('mark.placeholder').count()).toBe(2);
    expect(await install.locator('#token-hidden').innerText()).toContain('cannot be shown again');
    await install.locator('h2').scrollIntoViewIfNeeded();
    await shoot(page, 'settings-install-placeholder-desktop-light');

    await install.getByRole('button', { name: 'Create a new public token' }).click();
    const token = await install.locator('code.token').innerText();
    expect(token).toMatch(/^pub_\w{16,}$/);
    expect((await snippets())[0]).toBe(
      `<script defer src="${running.url}/tally.js" data-token="${token}"></script>`,
    );
    expect(await install.locator('mark.placeholder').count()).toBe(0);
    // Whole: the gateway takes it (an identify, which changes no traffic figure).
    const identify = {
      type: 'identify',
      data: { visitor_fingerprint: 'v_tok', session_id: 's_tok', customer_id: 'T' },
    };
    expect((await send(running.url, token, identify)).status).toBe(202);
    expect((await send(running.url, token.slice(0, 8), identify)).status).toBe(401);
  });

  it('opens a share link signed out, without anything of revenue', async () => {
    const shared = await newPage();
    const requests: string[] = [];
    shared.on('request', (request) => requests.push(request.url()));
    await shared.goto(`${shares.open}?period=custom&from=${DAY}&to=${DAY}`);
    await expect
      .poll(() => figures(shared), POLL)
      .toMatchObject({
        visitors: '3',
        visits: '4',
        pageviews: '5',
        'bounce-rate': '50%',
      });
    await expect.poll(() => rowsOf(shared, 'sources').then((rows) => rows.length), POLL).toBe(3);
    await shared.waitForLoadState('networkidle');
    expect(await shared.locator('.badge').innerText()).toBe('Shared view');
    expect(await shared.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await shared.getByRole('link', { name: 'Settings' }).count()).toBe(0);
    expect(await shared.getByRole('button', { name: '+ Add goal' }).count()).toBe(0);
    expect(await shared.locator('body').innerText()).not.toMatch(/revenue|MRR|USD/i);
    expect(requests.filter((url) => url.includes('/api/'))).not.toEqual([]);
    expect(requests.filter((url) => /revenue|\/session|cookie/i.test(url))).toEqual([]);
    const cookies = await shared.context().cookies();
    expect(cookies).toEqual([]);
    await shoot(shared, 'share-desktop-light');
  });

  it('asks for the password of a protected share link', async () => {
    const shared = await newPage();
    await shared.goto(`${shares.locked}?period=custom&from=${DAY}&to=${DAY}`);
    await shared.getByRole('heading', { name: 'Investors' }).waitFor();
    await shoot(shared, 'share-password-desktop-light');
    await shared.getByLabel('Password').fill('wrong password');
    await shared.getByRole('button', { name: 'Open the dashboard' }).click();
    expect(await shared.getByRole('alert').innerText()).toBe('That is not the password of this link.');
    await shared.getByLabel('Password').fill('open sesame please');
    await shared.getByRole('button', { name: 'Open the dashboard' }).click();
    await expect
      .poll(() => figures(shared), POLL)
      .toMatchObject({ visitors: '3', visits: '4', pageviews: '5' });
    await shared.reload(); // the grant lasts for the tab
    await expect.poll(() => figures(shared), POLL).toMatchObject({ visitors: '3' });
  });

  it('shows an empty project how to install the tracker', async () => {
    await page.goto(`${dashboard}/projects/${EMPTY}`);
    await page.getByRole('heading', { name: `Install the tracker on ${EMPTY}` }).waitFor();
    expect(await page.locator('.install').innerText()).toContain('starting pub_');
    await page.getByRole('button', { name: 'Create a new public token' }).click();
    const token = await page.locator('code.token').innerText();
    expect(token).toMatch(/^pub_/);
    // The script tag loads tally.js from this Tally's gateway, which it then sends to.
    expect(await page.locator('.snippet code').first().innerText()).toBe(
      `<script defer src="${running.url}/tally.js" data-token="${token}"></script>`,
    );
    // Waiting for the first pageview, it says why a page on the developer's own machine sends nothing.
    expect(await page.locator('.install').innerText()).toMatch(
      /Waiting for the first pageview[\s\S]*localhost[\s\S]*sends nothing unless the tag has data-allow-localhost/,
    );
    await shoot(page, 'install-desktop-light');
  });

  it('shows a project with traffic but no revenue how to send revenue, instead of zeros', async () => {
    await page.goto(`${dashboard}/projects/${TRAFFIC_ONLY}/revenue`);
    const guide = page.locator('.revenue-onboarding');
    await guide.getByRole('heading', { name: `Send revenue to ${TRAFFIC_ONLY}` }).waitFor();
    expect(await page.locator('#revenue-empty').innerText()).toMatch(
      /^No revenue in USD has reached this project yet\./,
    );
    expect(await page.locator('#revenue-mrr').count()).toBe(0); // no card of zeros
    const [command, curl, client, stripeImport] = await guide.locator('.snippet code').allInnerTexts();
    expect(command).toBe(`npx tally tokens create --project ${TRAFFIC_ONLY} --kind secret`);
    expect(curl).toContain(`curl -i ${running.url}/api/ingest `);
    expect(curl).toContain('-H "X-API-Token: $TALLY_SECRET_TOKEN"');
    expect(client).toContain("import { RevenueClient } from '@tally/revenue';");
    expect(client).toContain(`endpoint: '${running.url}'`);
    expect(client).toContain("currency: 'USD'");
    // The past: the Stripe import, its key from the environment, not an argument.
    expect(stripeImport).toBe(
      `STRIPE_SECRET_KEY=rk_live_… npx tally import stripe --project ${TRAFFIC_ONLY}`,
    );
    await shoot(page, 'revenue-onboarding-desktop-light');
  });

  // One test per colour scheme and screen: each loads ten pages with screenshots. Both screens in one
  // test took about 15 s on the machine of the benchmarks, and more than 60 s on a host three times slower
  // whose cores another process was loading; one screen took 21-23 s there beside a test suite, up to 60 s
  // beside two. The limit is vitest.config.ts's, for a test that hangs, not a speed requirement.
  it.each([
    ['light', 'desktop'],
    ['light', 'phone'],
    ['dark', 'desktop'],
    ['dark', 'phone'],
  ] as const)(
    'fits every view, %s, on a %s, and shows the names in the details dialog (screenshots)',
    async (colorScheme, size) => {
      const views: [string, string, (page: Page) => Promise<unknown>][] = [
        [
          'traffic',
          pagePath(PROJECT),
          (p) => expect.poll(() => figures(p), POLL).toMatchObject({ visitors: '3' }),
        ],
        ['revenue', `/projects/${PROJECT}/revenue`, (p) => p.locator('#revenue-mrr').waitFor()],
        ['customers', `/projects/${PROJECT}/customers`, (p) => p.locator('#customers-table').waitFor()],
        [
          'customer',
          `/projects/${PROJECT}/customers?customer=C`,
          (p) => p.locator('#history-table').waitFor(),
        ],
        ['health', `/projects/${PROJECT}/health`, (p) => p.locator('#health-table').waitFor()],
        ['settings', `/projects/${PROJECT}/settings`, (p) => p.locator('.install').waitFor()],
        ['install', `/projects/${EMPTY}`, (p) => p.locator('.install').waitFor()],
        [
          'revenue-onboarding',
          `/projects/${TRAFFIC_ONLY}/revenue`,
          (p) => p.locator('#revenue-empty').waitFor(),
        ],
      ];
      const overflow = (p: Page) =>
        p.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        ) as Promise<number>;
      const viewport = size === 'phone' ? PHONE : DESKTOP;
      const shot = await newTab(page, { colorScheme, viewport });
      for (const [name, path, ready] of views) {
        await shot.goto(`${dashboard}${path}`);
        await ready(shot);
        await shoot(shot, `${name}-${size}-${colorScheme}`);
        // Nothing makes the page wider than the screen: tables scroll inside their cards.
        expect(await overflow(shot), `${name}, ${size}, ${colorScheme}`).toBeLessThanOrEqual(0);
        // Every view's link is on the screen (the navigation wraps on a phone rather than cut one off).
        const width = (await shot.evaluate('document.documentElement.clientWidth')) as number;
        for (const link of await shot.locator('.views-nav a').all()) {
          const box = await link.boundingBox();
          expect(box, `${await link.innerText()} in ${name}`).not.toBeNull();
          expect(
            (box?.x ?? 0) + (box?.width ?? 0),
            `${await link.innerText()} in ${name}`,
          ).toBeLessThanOrEqual(width);
        }
      }
      // The details dialog keeps its names readable and its headers apart.
      await shot.goto(`${dashboard}${pagePath(PROJECT)}`);
      await expect.poll(() => rowsOf(shot, 'sources').then((rows) => rows.length), POLL).toBe(3);
      await shot.locator('section[data-panel="sources"]').getByRole('button', { name: 'Details' }).click();
      const dialog = shot.getByRole('dialog', { name: 'Channels' });
      await dialog.locator('table.bars:not(.is-stale) tbody tr').first().waitFor();
      const names = dialog.locator('tbody .value-text');
      expect(await names.allInnerTexts()).toEqual(['Direct', 'Email', 'Organic Search']);
      type Box = { clientWidth: number; scrollWidth: number };
      for (const name of await names.all()) {
        expect(await name.isVisible()).toBe(true);
        // Wide enough for its whole text: not cut to nothing, nor to an ellipsis.
        const { clientWidth, scrollWidth } = await name.evaluate((e) => {
          const box = e as unknown as Box;
          return { clientWidth: box.clientWidth, scrollWidth: box.scrollWidth };
        });
        expect(clientWidth).toBeGreaterThan(20);
        expect(scrollWidth).toBeLessThanOrEqual(clientWidth + 1);
      }
      type Cell = {
        querySelector(s: string): Cell | null;
        getBoundingClientRect(): { left: number; right: number };
      };
      const headers = await dialog.locator('thead th').evaluateAll((cells) =>
        (cells as unknown as Cell[]).map((c) => {
          const r = (c.querySelector('button') ?? c).getBoundingClientRect();
          return [r.left, r.right];
        }),
      );
      for (let i = 1; i < headers.length; i++)
        expect((headers[i] as number[])[0], `header ${i}`).toBeGreaterThanOrEqual(
          (headers[i - 1] as number[])[1] as number,
        );
      await dialog.screenshot({ path: join(SHOTS, `details-${size}-${colorScheme}.png`) });
      const shared = await newPage({ colorScheme, viewport });
      await shared.goto(`${shares.open}?period=custom&from=${DAY}&to=${DAY}`);
      await expect.poll(() => figures(shared), POLL).toMatchObject({ visitors: '3' });
      await shoot(shared, `share-${size}-${colorScheme}`);
      expect(await overflow(shared)).toBeLessThanOrEqual(0);
    },
    120_000,
  );

  it('is usable with the keyboard', async () => {
    const keys = await newTab(page);
    await keys.goto(`${dashboard}${pagePath(PROJECT)}`);
    await figures(keys);
    // Tabs: one tab stop, arrows move between them.
    const pages = keys.locator('section[data-panel="pages"]');
    await pages.getByRole('tab', { name: 'Top pages' }).focus();
    await keys.keyboard.press('ArrowRight');
    expect(await pages.getByRole('tab', { name: 'Entry pages' }).getAttribute('aria-selected')).toBe('true');
    expect(await keys.evaluate('document.activeElement.textContent')).toBe('Entry pages');
    // A row is a button: Enter filters by it.
    await keys.getByRole('button', { name: 'Filter by channel Email' }).focus();
    await keys.keyboard.press('Enter');
    await keys.waitForURL(/filters=channel%3D%3DEmail/);
    await expect
      .poll(() => figures(keys), POLL)
      .toMatchObject({ visitors: '1', visits: '1', 'bounce-rate': '0%' });
    // A figure is a button: Space draws it in the chart.
    await keys.locator('button.figure', { hasText: 'Pageviews' }).focus();
    await keys.keyboard.press('Space');
    await keys.waitForURL(/metric=pageviews/);
    expect(await keys.locator('#chart-title').innerText()).toContain('Pageviews');
  });

  it("passes axe-core's WCAG 2.1 A and AA checks (labels, names, contrast), light and dark", async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await newPage({ colorScheme, bypassCSP: true }); // CSP would refuse axe's script
      await page.goto(`${dashboard}/login`);
      expect(await axeViolations(page), `sign-in, ${colorScheme}`).toEqual([]);
      await signIn(page);
      await page.goto(
        `${dashboard}${pagePath(PROJECT, `period=custom&from=${DAY}&to=${DAY}&filters=channel%3D%3DDirect`)}`,
      );
      await figures(page);
      await page.waitForLoadState('networkidle');
      expect(await axeViolations(page), `traffic, ${colorScheme}`).toEqual([]);
      await page.goto(`${dashboard}/projects/${PROJECT}/settings`);
      await page.getByRole('heading', { name: 'Share links' }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await axeViolations(page), `settings, ${colorScheme}`).toEqual([]);
      await page.goto(`${dashboard}/projects/${EMPTY}`);
      await page.locator('.install').waitFor();
      expect(await axeViolations(page), `install, ${colorScheme}`).toEqual([]);
      const shared = await newPage({ colorScheme, bypassCSP: true });
      await shared.goto(shares.locked as string);
      await shared.getByRole('heading', { name: 'Investors' }).waitFor();
      expect(await axeViolations(shared), `share password, ${colorScheme}`).toEqual([]);
    }
  });

  it('replaces the revenue guide with the figures once its example record is sent', async () => {
    await page.goto(`${dashboard}/projects/${TRAFFIC_ONLY}/revenue`);
    const curl = await page.locator('.revenue-onboarding .snippet code').nth(1).innerText();
    const body = JSON.parse(/-d '(.*)'$/s.exec(curl)?.[1] as string) as { type: string; data: unknown };
    expect((await send(running.url, trafficOnlySecret, body)).status).toBe(202);
    // The guide checks every 10 seconds.
    await expect.poll(() => page.locator('#revenue-mrr').count(), { timeout: 40_000, interval: 500 }).toBe(1);
    await expect.poll(() => text(page, '#revenue-mrr'), POLL).toBe('$49.00');
    expect(await page.locator('.revenue-onboarding').count()).toBe(0);
  });

  it('logged no console error', () => {
    // Browsers log every 401 answer as a failed resource: the app meets them only where it asks whether
    // the visitor is signed in (the projects and the session, signed out) and where a password is refused.
    const expected = /status of 401 .*\/api\/v1\/(projects|session|shared\/shr_[^/]+\/unlock)\)$/;
    expect(consoleErrors.filter((line) => !expected.test(line))).toEqual([]);
  });
});
