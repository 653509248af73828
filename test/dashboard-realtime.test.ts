// The realtime view in real headless Chromium against npm start's process: records sent through
// /api/ingest now (and one 40 minutes old, and a bot's) appear in the open view, with exact figures, once the
// page's own clock has run 5 seconds (Playwright's clock: the page's timers, no wall-clock wait), without the
// page being reloaded (a marker set on `window` survives); an unchanged answer comes back 304
// to the page's ETag; a hidden tab asks nothing and asks at once when shown again; a note made within the
// 30 minutes is a marker on its minute, an older one is not drawn. Screenshots at 1440 and
// 390 px, light and dark, go to test-output/dashboard-web/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium } from './support/browser.ts';
import { eventually, ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'live-site';
const EMAIL = 'live@example.com';
const PASSWORD = 'a long enough password';
const POLL = { timeout: 20_000, interval: 100 };
const REALTIME = `/api/v1/projects/${PROJECT}/traffic/realtime`;

let browser: Browser;
let running: TallyProcess;
let dashboard: string;
let publicToken: string;
let readKey: string;
let signInToken: string;
const consoleErrors: string[] = [];

const pageview = (visitor: string, path: string, timestamp: number, extra: Record<string, unknown> = {}) => ({
  type: 'pageview',
  data: {
    visitor_fingerprint: visitor,
    session_id: `s_${visitor}`,
    url: `https://shop.example${path}`,
    path,
    screen_width: 1440,
    timestamp,
    ...extra,
  },
});

/** What the API answers now, for waiting until records have landed. */
async function realtimeNow(): Promise<{ visitors: number; pages: { value: string; visitors: number }[] }> {
  const res = await fetch(`${dashboard}${REALTIME}`, { headers: { authorization: `Bearer ${readKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { visitors: number; pages: { value: string; visitors: number }[] };
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();
const rows = (page: Page, id: string) =>
  page
    .locator(`#${id} tbody tr`)
    .evaluateAll((trs) =>
      trs.map((tr) =>
        Array.from((tr as unknown as { cells: ArrayLike<{ innerText: string }> }).cells, (c) =>
          c.innerText.trim(),
        ),
      ),
    );

async function shoot(page: Page, name: string) {
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await buildWebIfStale();
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  publicToken = (await store.create(PROJECT, 'public')).token;
  readKey = (await store.create(PROJECT, 'read')).token;
  const printed = await tally(
    ['users', 'add', EMAIL, '--project', PROJECT],
    pipelineEnv({ TALLY_DATA_DIR: dataDir }),
  );
  signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  expect(signInToken).toBeTruthy();
  // Notes as a deploy script adds them: one 3 minutes ago (a marker on its minute), one 2 hours ago (none).
  for (const [ago, text] of [
    [3 * 60_000, 'hotfix deployed'],
    [2 * 3_600_000, 'old release'],
  ] as const) {
    const date = new Date(Date.now() - ago).toISOString();
    await tally(
      ['annotations', 'add', '--project', PROJECT, '--date', date, text],
      pipelineEnv({ TALLY_DATA_DIR: dataDir }),
    );
  }
  [browser, running] = await Promise.all([launchChromium(), startTallyProcess({ TALLY_DATA_DIR: dataDir })]);
  dashboard = running.endpoints.dashboardUrl as string;
  // A visit 40 minutes ago: in the project, outside the realtime window.
  expect(
    (await send(running.url, publicToken, pageview('v_old', '/old', Date.now() - 40 * 60_000))).status,
  ).toBe(202);
  const day = new Date(Date.now() - 40 * 60_000).toISOString().slice(0, 10);
  await eventually(30_000, 'the old visit landing', async () => {
    const res = await fetch(`${dashboard}/api/v1/projects/${PROJECT}/traffic/summary?from=${day}&to=${day}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    return res.status === 200 && ((await res.json()) as { pageviews: number }).pageviews === 1;
  });
});

afterAll(async () => {
  await browser?.close();
  await running?.stop('SIGTERM');
});

describe('the realtime view in Chromium', () => {
  let page: Page;
  const realtimeRequests: string[] = [];
  const realtimeStatuses: number[] = [];

  it('opens from the navigation: 0 visitors and no rows while the only visit is 40 minutes old', async () => {
    const context = await browser.newContext({
      locale: 'en-US',
      timezoneId: 'America/Los_Angeles',
      viewport: { width: 1440, height: 900 },
    });
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    page.on('request', (r) => {
      if (r.url().includes('/traffic/realtime')) realtimeRequests.push(r.url());
    });
    page.on('response', (r) => {
      if (r.url().includes('/traffic/realtime')) realtimeStatuses.push(r.status());
    });
    // The page's timers run on Playwright's clock: the test moves it, no wall-clock wait.
    await page.clock.install();
    await page.goto(`${dashboard}/set-password#token=${signInToken}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('link', { name: 'Realtime' }).click();
    await page.waitForURL(`${dashboard}/projects/${PROJECT}/realtime`);
    await expect.poll(() => text(page, '#realtime-visitors'), POLL).toBe('0');
    expect(await text(page, '#realtime-pageviews')).toBe('0');
    expect(await page.locator('.panel .empty').count()).toBe(3);
    await page.evaluate("window.realtimeMarker = 'not reloaded'");
    // From here the page's time moves only when the test moves it.
    await page.clock.pauseAt(new Date(Date.now() + 10_000));
  });

  it('shows records sent now within 5 s of its clock, without reloading the page; bots left out', async () => {
    const now = Date.now();
    const google = { referrer: 'https://www.google.com/' };
    const sent = [
      pageview('v1', '/', now - 60_000),
      pageview('v1', '/pricing', now - 1_000),
      pageview('v2', '/pricing', now - 2_000, google),
    ];
    for (const record of sent) expect((await send(running.url, publicToken, record)).status).toBe(202);
    // curl's own User-Agent is a bot: stored, never counted.
    expect((await send(running.url, publicToken, pageview('bot', '/bot', now), 'curl/8.5.0')).status).toBe(
      202,
    );
    await eventually(
      30_000,
      'the records landing in visits',
      async () => (await realtimeNow()).visitors === 2,
    );

    // The page has not asked since; within 5 s of its clock it asks again and shows them.
    await page.clock.runFor(5_000);
    await expect.poll(() => text(page, '#realtime-visitors'), POLL).toBe('2');
    expect(await text(page, '#realtime-pageviews')).toBe('3');
    expect(await rows(page, 'realtime-pages')).toEqual([
      ['/pricing', '2'],
      ['/', '1'],
    ]);
    expect(await rows(page, 'realtime-sources')).toEqual([
      ['Direct / None', '1'],
      ['Google', '1'],
    ]);
    // Requests from this machine's loopback address have no country.
    expect(await rows(page, 'realtime-countries')).toEqual([['(unknown)', '2']]);
    // The same page: a reload would have cleared the marker.
    expect(await page.evaluate('window.realtimeMarker')).toBe('not reloaded');
    // The hidden table under the chart: three pageviews in the last minutes, 30 minutes listed.
    const minutes = await page.locator('.sr-only table tbody tr').count();
    expect(minutes).toBe(30);
    // The note of 3 minutes ago is a marker on its minute; the one of 2 hours ago is outside the chart.
    const markers = page.locator('.chart-card .annotation-marker');
    await expect.poll(() => markers.count(), POLL).toBe(1);
    expect(await markers.getAttribute('aria-label')).toBe('Note: hotfix deployed');
  });

  it('asks with the ETag of the last answer: unchanged figures come back 304', async () => {
    const before = realtimeStatuses.length;
    const answered = page.waitForResponse((r) => r.url().includes('/traffic/realtime'));
    await page.clock.runFor(3_000);
    expect((await answered).status()).toBe(304);
    expect(realtimeStatuses.length).toBe(before + 1);
    expect(await text(page, '#realtime-visitors')).toBe('2');
  });

  it('asks nothing while the tab is hidden, and at once when it shows again', async () => {
    const setVisibility = (state: 'hidden' | 'visible') =>
      page.evaluate(
        `Object.defineProperty(document, 'visibilityState', { value: '${state}', configurable: true });
         document.dispatchEvent(new Event('visibilitychange'))`,
      );
    await setVisibility('hidden');
    const before = realtimeRequests.length;
    await page.clock.runFor(60_000);
    const shown = page.waitForRequest((r) => r.url().includes('/traffic/realtime'));
    await setVisibility('visible');
    await shown;
    // Events arrive in order: any request made while hidden would have come before this one.
    expect(realtimeRequests.length).toBe(before + 1);
  });

  it('fits a desktop and a phone, light and dark (screenshots)', async () => {
    for (const [name, viewport] of [
      ['desktop', { width: 1440, height: 900 }],
      ['phone', { width: 390, height: 844 }],
    ] as const) {
      for (const scheme of ['light', 'dark'] as const) {
        // A context of its own (the same session's cookie), its timers real: the first page's are paused.
        const context = await browser.newContext({
          storageState: await page.context().storageState(),
          locale: 'en-US',
          colorScheme: scheme,
          viewport,
        });
        const tab = await context.newPage();
        tab.on('pageerror', (e) => consoleErrors.push(e.message));
        await tab.goto(`${dashboard}/projects/${PROJECT}/realtime`);
        await expect.poll(() => text(tab, '#realtime-visitors'), POLL).toBe('2');
        // Nothing wider than the screen.
        expect(await tab.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
          viewport.width,
        );
        await shoot(tab, `realtime-${name}-${scheme}`);
        await context.close();
      }
    }
    expect(consoleErrors).toEqual([]);
  });
});
