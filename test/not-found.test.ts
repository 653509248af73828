// Issue 23's "404 pages", end to end in real headless Chromium: a page on another site (`shop.test`, mapped
// to 127.0.0.1 so that it is an ordinary, non-local site) carries the tally.js tag that npm start's process
// serves and the documented one-line call of its 404 page; the record lands in the warehouse as a `404`
// custom event with the page's path and referrer (as it does from tally.full.js's `data-404`); the
// dashboard's Pages panel then lists that path under "Not found" with its events and visitors, a click on
// it filters the view by the page, and a range with no 404 event says how to mark a 404 page. The API's
// not_found breakdown is checked to the figure on records sent to /api/ingest. Screenshots at 1440 and
// 390 px, light and dark, go to test-output/not-found/ (git-ignored) to be looked at; axe-core finds no
// WCAG 2.1 A/AA fault in the panel, light and dark.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTrackerIfStale } from '../packages/core/scripts/tracker-bundles.mjs';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { CHROME_UA, launchChromium } from './support/browser.ts';
import { eventually, ROOT, tally, tempDataDir } from './support/processes.ts';
import {
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
  type TallyProcess,
} from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'not-found');
const SITE = 'shop-404';
/** A project fed through /api/ingest for the exact figures of the API's not_found breakdown. */
const FIGURES = 'figures-404';
const FIGURES_DAY = '2026-05-05';
/** A project whose 404 page has tally.full.js with data-404. */
const FULL = 'full-404';
const EMAIL = 'owner@example.com';
const PASSWORD = 'a long enough password';
/** The call README.md documents for a 404 page, word for word. */
const NOT_FOUND_CALL =
  "<script>tally('event', '404', { path: location.pathname, referrer: document.referrer })</script>";
const POLL = { timeout: 20_000, interval: 100 };

let browser: Browser;
let running: TallyProcess;
let warehouse: Warehouse;
let pages: Server;
let sitePort: number;
let dashboard: string;
let publicToken: string;
let fullToken: string;
let signInToken: string;
let figuresRead: string;
const html = new Map<string, string>();

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await Promise.all([buildTrackerIfStale(() => {}), buildWebIfStale()]);
  pages = createServer((request, response) => {
    const body = html.get(new URL(request.url ?? '/', 'http://site').pathname);
    // The site's own 404 page for any unknown path, as a web server's error page would be.
    response
      .writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' })
      .end(body ?? html.get('404'));
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  sitePort = (pages.address() as AddressInfo).port;

  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  publicToken = (await store.create(SITE, 'public')).token;
  fullToken = (await store.create(FULL, 'public')).token;
  const figuresPublic = (await store.create(FIGURES, 'public')).token;
  figuresRead = (await store.create(FIGURES, 'read')).token;
  await store.close();
  const printed = await tally(
    ['users', 'add', EMAIL, '--project', SITE],
    pipelineEnv({ TALLY_DATA_DIR: dataDir }),
  );
  signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  expect(signInToken).toBeTruthy();
  [browser, running] = await Promise.all([
    launchChromium(['--host-resolver-rules=MAP *.test 127.0.0.1']),
    startTallyProcess({ TALLY_DATA_DIR: dataDir }),
  ]);
  dashboard = running.endpoints.dashboardUrl as string;
  warehouse = await publishedWarehouse(dataDir);

  // v1 misses /a twice and /b once, v2 misses /a; a 404 without a path and another event with one.
  const event = (visitor: string, minute: number, name: string, data: Record<string, string>) => ({
    type: 'event',
    data: {
      visitor_fingerprint: visitor,
      session_id: `s_${visitor}`,
      event_name: name,
      event_data: data,
      url: 'https://shop.example/',
      path: '/',
      timestamp: Date.parse(`${FIGURES_DAY}T10:${String(minute).padStart(2, '0')}:00Z`),
    },
  });
  const records = [
    event('v1', 0, '404', { path: '/a', referrer: 'https://news.example/' }),
    event('v1', 1, '404', { path: '/a', referrer: '' }),
    event('v1', 2, '404', { path: '/b', referrer: '' }),
    event('v2', 3, '404', { path: '/a', referrer: '' }),
    event('v2', 4, '404', { referrer: '' }),
    event('v2', 5, 'signup', { path: '/c' }),
  ];
  for (const record of records) expect((await send(running.url, figuresPublic, record)).status).toBe(202);
});

afterAll(async () => {
  await browser?.close();
  await warehouse?.close();
  await running?.stop('SIGTERM');
  pages?.closeAllConnections();
  await new Promise((resolve) => pages?.close(resolve));
});

interface EventRow {
  type: string;
  path: string;
  event_name: string;
  event_data: Record<string, string>;
  day: string;
}

async function shoot(page: Page, name: string) {
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Screenshots of the page at 1440 and 390 px, light and dark: `<name>-desktop-light.png` … */
async function shootAll(page: Page, name: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    for (const [size, viewport] of [
      ['desktop', { width: 1440, height: 900 }],
      ['phone', { width: 390, height: 844 }],
    ] as const) {
      await page.emulateMedia({ colorScheme });
      await page.setViewportSize(viewport);
      await shoot(page, `${name}-${size}-${colorScheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1440, height: 900 });
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** What axe-core finds wrong against WCAG 2.1 A and AA in the Pages panel (contrast of the code, names). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const result = (await page.evaluate(
    "axe.run('section[data-panel=\"pages\"]', { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })",
  )) as { violations: { id: string; nodes: { target: string[] }[] }[]; passes: { id: string }[] };
  expect(result.passes.map((p) => p.id)).toEqual(expect.arrayContaining(['color-contrast']));
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The rows of the Pages panel's list, once loaded, as [path, ...cells]. */
const rowsOf = (page: Page) =>
  page
    .locator('section[data-panel="pages"] table.bars:not(.is-stale) tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        Array.from((row as unknown as { cells: ArrayLike<{ innerText: string }> }).cells, (cell) =>
          cell.innerText.trim(),
        ),
      ),
    );

describe('404 pages', () => {
  it('breaks the 404 events down by their path: events and visitors per path, in the filters', async () => {
    const breakdown = async (filters?: string) => {
      const query = new URLSearchParams({
        from: FIGURES_DAY,
        to: FIGURES_DAY,
        ...(filters ? { filters } : {}),
      });
      const res = await fetch(
        `${dashboard}/api/v1/projects/${FIGURES}/traffic/breakdown/not_found?${query}`,
        { headers: { authorization: `Bearer ${figuresRead}` } },
      );
      expect(res.status).toBe(200);
      return (await res.json()) as { rows: unknown[]; total: number };
    };
    let body: { rows: unknown[]; total: number } = { rows: [], total: 0 };
    await eventually(30_000, 'the 404 events in the visits', async () => {
      body = await breakdown();
      return body.total === 4;
    });
    // The 404 without a path and the other event's path are not listed.
    expect(body.rows).toEqual([
      { value: '/a', events: 3, visitors: 2, share: 0.75 },
      { value: '/b', events: 1, visitors: 1, share: 0.25 },
    ]);
    // A filter keeps visits: v1's, the one visit that missed /b.
    const filtered = (await breakdown('prop:path==/b')).rows as {
      value: string;
      events: number;
      visitors: number;
    }[];
    expect(filtered.map((r) => [r.value, r.events, r.visitors])).toEqual([
      ['/a', 2, 1],
      ['/b', 1, 1],
    ]);
  });

  let day = '';
  let page: Page;

  it("sends the documented call's 404 event from a not-found page, with its path and referrer", async () => {
    const tag = `<script src="${running.url}/tally.js" data-token="${publicToken}"></script>`;
    html.set(
      '404',
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title>${tag}` +
        `${NOT_FOUND_CALL}</head><body><h1>Page not found</h1></body></html>`,
    );
    html.set(
      '/',
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>${tag}</head>` +
        '<body><a href="/old-pricing">Old pricing</a></body></html>',
    );
    const context = await browser.newContext({ userAgent: CHROME_UA, locale: 'en-US' });
    const visitor = await context.newPage();
    await visitor.goto(`http://shop.test:${sitePort}/`);
    await visitor.getByRole('link', { name: 'Old pricing' }).click();
    await visitor.waitForURL(/\/old-pricing$/);
    let rows: EventRow[] = [];
    await eventually(30_000, 'the 404 event landing', async () => {
      rows = await warehouse.query<EventRow>(
        "SELECT type, path, event_name, event_data, toString(toDate(timestamp, 'UTC')) AS day FROM events FINAL " +
          "WHERE project_id = {project:String} AND type = 'event' AND NOT is_bot",
        { project: SITE },
      );
      return rows.length > 0;
    });
    await context.close();
    expect(rows).toEqual([
      {
        type: 'event',
        path: '/old-pricing',
        event_name: '404',
        event_data: { path: '/old-pricing', referrer: `http://shop.test:${sitePort}/` },
        day: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      },
    ]);
    day = (rows[0] as EventRow).day;
    // The visits table (every dashboard figure's source) has it once the consumer folded it in.
    await eventually(30_000, 'the 404 event in the visits', async () => {
      const folded = await warehouse.query<{ n: number }>(
        "SELECT count() AS n FROM visits FINAL WHERE project_id = {project:String} AND has(event_names, '404')",
        { project: SITE },
      );
      return Number(folded[0]?.n) > 0;
    });
  });

  it("sends the same 404 event from tally.full.js's data-404 attribute", async () => {
    html.set(
      '/gone/',
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title>' +
        `<script defer src="${running.url}/tally.full.js" data-token="${fullToken}" data-404></script>` +
        '</head><body><h1>Page not found</h1></body></html>',
    );
    const context = await browser.newContext({ userAgent: CHROME_UA, locale: 'en-US' });
    const visitor = await context.newPage();
    await visitor.goto(`http://shop.test:${sitePort}/gone/`, { referer: 'https://news.example/' });
    let rows: { type: string; event_name: string; event_data: Record<string, string> }[] = [];
    await eventually(30_000, 'the pageview and the 404 event landing', async () => {
      rows = await warehouse.query(
        'SELECT type, event_name, event_data FROM events FINAL ' +
          'WHERE project_id = {project:String} AND NOT is_bot ORDER BY type DESC',
        { project: FULL },
      );
      return rows.length >= 2;
    });
    await context.close();
    expect(rows).toEqual([
      { type: 'pageview', event_name: '', event_data: {} },
      { type: 'event', event_name: '404', event_data: { path: '/gone/', referrer: 'https://news.example/' } },
    ]);
  });

  it('lists the path under Not found in the Pages panel, and a click filters the view by it', async () => {
    // bypassCSP: axe-core is added to the page as a script of the test's.
    const context = await browser.newContext({
      locale: 'en-US',
      viewport: { width: 1440, height: 900 },
      bypassCSP: true,
    });
    page = await context.newPage();
    await page.goto(`${dashboard}/set-password#token=${signInToken}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${dashboard}/projects/${SITE}?period=custom&from=${day}&to=${day}`);
    const panel = page.locator('section[data-panel="pages"]');
    await panel.getByRole('tab', { name: 'Not found' }).click();
    // The path, its events, its visitors: one of each.
    await expect.poll(() => rowsOf(page), POLL).toEqual([['/old-pricing', '1', '1', '100%']]);
    await shootAll(page, 'not-found');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await axeViolations(page), colorScheme).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByRole('button', { name: 'Filter by page not found /old-pricing' }).click();
    await page.waitForURL(/filters=page%3D%3D%2Fold-pricing/);
    // The filter keeps the visits that saw the page: the visitor's one visit, the page that linked to it
    // and the missing page.
    await panel.getByRole('tab', { name: 'Top pages' }).click();
    await expect
      .poll(() => rowsOf(page), POLL)
      .toEqual([
        ['/', '1', '1', '50%'],
        ['/old-pricing', '1', '1', '50%'],
      ]);
  });

  it('says how to mark a 404 page when the range has no 404 event', async () => {
    const before = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${dashboard}/projects/${SITE}?period=custom&from=${before}&to=${before}`);
    const panel = page.locator('section[data-panel="pages"]');
    await panel.getByRole('tab', { name: 'Not found' }).click();
    await expect.poll(() => panel.locator('.empty').innerText(), POLL).toContain(NOT_FOUND_CALL);
    await shootAll(page, 'not-found-empty');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      expect(await axeViolations(page), colorScheme).toEqual([]);
    }
  });
});
