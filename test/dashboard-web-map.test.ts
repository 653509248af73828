// The Locations card's world map in real headless Chromium against npm start's process behind a trusted
// proxy (TRUST_PROXY, so the gateway reads each visitor's address from X-Forwarded-For and looks up its
// country, region and city, as it does behind a load balancer): pageviews from addresses in the United States
// and Great Britain land with their countries, regions and cities; the map shades exactly the countries the
// API lists (each named with its visitors), clicking one filters the dashboard by it; the Regions and Cities
// tabs list the API's rows and filter by a row; and the card reads at 1440 and 390 px, light and dark.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium, watchedPage } from './support/browser.ts';
import { eventually, ROOT, tally, tempDataDir } from './support/processes.ts';
import { BROWSER, pipelineEnv, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'map-site';
const EMAIL = 'map@example.com';
const PASSWORD = 'a long enough password';
const POLL = { timeout: 20_000, interval: 100 };
const RANGE = 'period=custom&from=2026-05-01&to=2026-05-05';
/** Addresses whose places the gateway's database gives (services/gateway/src/country.test.ts). */
const VISITORS = [
  { ip: '8.8.8.8', visitor: 'us1' },
  { ip: '8.8.4.4', visitor: 'us2' },
  { ip: '81.2.69.142', visitor: 'gb1' },
];

let browser: Browser;
let running: TallyProcess;
let dashboard: string;
let signInToken: string;
let readKey: string;
const contexts: BrowserContext[] = [];
const consoleErrors: string[] = [];

const newPage = (
  colorScheme: 'light' | 'dark',
  width: number,
  storageState?: Awaited<ReturnType<BrowserContext['storageState']>>,
): Promise<Page> =>
  watchedPage(browser, { contexts, errors: consoleErrors }, colorScheme, width, storageState);

const api = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${dashboard}/api/v1/projects/${PROJECT}${path}`, {
    headers: { authorization: `Bearer ${readKey}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await buildWebIfStale();
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  const publicToken = (await store.create(PROJECT, 'public')).token;
  readKey = (await store.create(PROJECT, 'read')).token;
  const env = pipelineEnv({ TALLY_DATA_DIR: dataDir });
  const printed = await tally(['users', 'add', EMAIL, '--project', PROJECT], env);
  signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  [browser, running] = await Promise.all([
    launchChromium(),
    startTallyProcess({ TALLY_DATA_DIR: dataDir, TRUST_PROXY: '127.0.0.1' }),
  ]);
  dashboard = running.endpoints.dashboardUrl as string;
  for (const { ip, visitor } of VISITORS) {
    const res = await fetch(`${running.url}/api/ingest`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-token': publicToken,
        'user-agent': BROWSER,
        'x-forwarded-for': ip,
      },
      body: JSON.stringify({
        type: 'pageview',
        data: {
          visitor_fingerprint: visitor,
          session_id: `s_${visitor}`,
          url: 'https://map.example/',
          path: '/',
          timestamp: Date.parse('2026-05-02T10:00:00Z'),
        },
      }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
  }
  await eventually(60_000, 'the pageviews landing', async () => {
    const summary = await api<{ pageviews: number }>('/traffic/summary?from=2026-05-01&to=2026-05-05');
    return summary.pageviews === VISITORS.length;
  });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await running?.stop('SIGTERM');
});

describe('the world map of the Locations card', () => {
  let page: Page;

  it("shades the countries the API lists, each named with its visitors, and filters by one's click", async () => {
    const countries = await api<{ rows: Array<{ value: string; visitors: number }> }>(
      '/traffic/breakdown/country?from=2026-05-01&to=2026-05-05',
    );
    expect(countries.rows.map((r) => [r.value, r.visitors])).toEqual([
      ['US', 2],
      ['GB', 1],
    ]);
    page = await newPage('light', 1440);
    await page.goto(`${dashboard}/set-password#token=${signInToken}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(/\/projects\/map-site/);
    await page.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
    const shaded = page.locator('.world-map path.has-visitors');
    await expect.poll(() => shaded.count(), POLL).toBe(2);
    expect(await page.locator('.world-map path').count()).toBeGreaterThan(150);
    const labels = (await page.evaluate(
      `[...document.querySelectorAll('.world-map path.has-visitors')].map((p) => [p.getAttribute('data-country'), p.getAttribute('aria-label')])`,
    )) as string[][];
    expect(labels.sort()).toEqual([
      ['GB', 'United Kingdom: 1 visitors'],
      ['US', 'United States: 2 visitors'],
    ]);
    // The busiest country is the most strongly shaded.
    const opacity = async (code: string) =>
      Number(
        await page.evaluate(
          `getComputedStyle(document.querySelector('.world-map path[data-country="${code}"]')).fillOpacity`,
        ),
      );
    expect(await opacity('US')).toBeGreaterThan(await opacity('GB'));
    await page.screenshot({ path: join(SHOTS, 'map-1440-light.png'), fullPage: true });

    await page.locator('.world-map path[data-country="GB"]').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('filters'), POLL).toBe('country==GB');
    await expect.poll(() => shaded.count(), POLL).toBe(1);
    await expect
      .poll(() => page.locator('.top-figures:not(.is-stale) #visitors').innerText(), POLL)
      .toBe('1');
    // The keyboard reaches a country and Enter filters by it too.
    await page.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
    await expect.poll(() => shaded.count(), POLL).toBe(2);
    await page.locator('.world-map path[data-country="US"]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('filters'), POLL).toBe('country==US');
  });

  it('lists regions and cities (named with their country), and a filter by one keeps only its visitors', async () => {
    const range = 'from=2026-05-01&to=2026-05-05';
    const rows = async (dimension: string) =>
      (
        await api<{ rows: Array<{ value: string; visitors: number }> }>(
          `/traffic/breakdown/${dimension}?${range}`,
        )
      ).rows.map((r) => [r.value, r.visitors]);
    expect(await rows('region')).toEqual([
      ['California, US', 2],
      ['England, GB', 1],
    ]);
    expect(await rows('city')).toEqual([
      ['Mountain View, California, US', 2],
      ['London, England, GB', 1],
    ]);
    const london = await api<{ visitors: number }>(
      `/traffic/summary?${range}&filters=${encodeURIComponent('city==London, England, GB')}`,
    );
    expect(london.visitors).toBe(1);
    const notCalifornia = await api<{ visitors: number }>(
      `/traffic/summary?${range}&filters=${encodeURIComponent('region!=California, US')}`,
    );
    expect(notCalifornia.visitors).toBe(1);

    await page.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
    const panel = page.locator('[data-panel="locations"]');
    await panel.getByRole('tab', { name: 'Regions' }).click();
    await expect
      .poll(() => panel.locator('table tbody tr').first().innerText(), POLL)
      .toContain('California, United States');
    await panel.getByRole('tab', { name: 'Cities' }).click();
    await expect
      .poll(() => panel.locator('table tbody tr').allInnerTexts(), POLL)
      .toEqual([
        expect.stringContaining('Mountain View, California, United States'),
        expect.stringContaining('London, England, United Kingdom'),
      ]);
    await page.screenshot({ path: join(SHOTS, 'cities-1440-light.png'), fullPage: true });
    await panel.getByText('London, England, United Kingdom').click();
    await expect
      .poll(() => new URL(page.url()).searchParams.get('filters'), POLL)
      .toBe('city==London, England, GB');
    await expect
      .poll(() => page.locator('.top-figures:not(.is-stale) #visitors').innerText(), POLL)
      .toBe('1');
  });

  it('reads at 390 px and in dark mode', async () => {
    for (const [scheme, width] of [
      ['dark', 1440],
      ['light', 390],
      ['dark', 390],
    ] as const) {
      const shot = await newPage(scheme, width, await page.context().storageState());
      await shot.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
      await expect.poll(() => shot.locator('.world-map path.has-visitors').count(), POLL).toBe(2);
      await shot
        .locator('[data-panel="locations"]')
        .screenshot({ path: join(SHOTS, `map-${width}-${scheme}.png`) });
      expect(await shot.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
    }
    expect(consoleErrors).toEqual([]);
  });
});
