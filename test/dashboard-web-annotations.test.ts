// Annotations and saved segments in real headless Chromium against npm start's process (the setup of
// dashboard-web-revenue.test.ts, a process and data of its own): a note added with `tally annotations add`
// (as a deploy script would) is a marker on the traffic chart whose text shows on hover; an editor saves the
// filters in force as a segment, and clicking it later in the Segments menu puts those filters in force
// with the same figures as the filtered API. Screenshots at 1440 and 390 px, light and dark, go to
// test-output/dashboard-web/ to be looked at.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium, watchedPage } from './support/browser.ts';
import { eventually, ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'notes-site';
const EMAIL = 'editor@example.com';
const PASSWORD = 'a long enough password';
const POLL = { timeout: 20_000, interval: 100 };
const RANGE = 'period=custom&from=2026-05-01&to=2026-05-05';

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

const apiSummary = async (filters?: string) => {
  const query = `from=2026-05-01&to=2026-05-05${filters ? `&filters=${encodeURIComponent(filters)}` : ''}`;
  const res = await fetch(`${dashboard}/api/v1/projects/${PROJECT}/traffic/summary?${query}`, {
    headers: { authorization: `Bearer ${readKey}` },
  });
  return (await res.json()) as { visitors: number; pageviews: number };
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
  await tally(['annotations', 'add', '--project', PROJECT, '--date', '2026-05-03', 'v2 deployed'], env);
  [browser, running] = await Promise.all([launchChromium(), startTallyProcess({ TALLY_DATA_DIR: dataDir })]);
  dashboard = running.endpoints.dashboardUrl as string;
  const pageview = (visitor: string, day: string, path: string) => ({
    type: 'pageview',
    data: {
      visitor_fingerprint: visitor,
      session_id: `s_${visitor}_${day}`,
      url: `https://notes.example${path}`,
      path,
      timestamp: Date.parse(`${day}T10:00:00Z`),
    },
  });
  const records = [
    pageview('v1', '2026-05-01', '/'),
    pageview('v2', '2026-05-02', '/pricing'),
    pageview('v3', '2026-05-03', '/'),
    pageview('v4', '2026-05-03', '/pricing'),
    pageview('v5', '2026-05-04', '/pricing'),
  ];
  for (const record of records) expect((await send(running.url, publicToken, record)).status).toBe(202);
  await eventually(60_000, 'the pageviews landing', async () => (await apiSummary()).pageviews === 5);
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await running?.stop('SIGTERM');
});

async function signIn(page: Page) {
  await page.goto(`${dashboard}/set-password#token=${signInToken}`);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('Repeat it').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.waitForURL(/\/projects\/notes-site/);
}

describe('annotations and segments in Chromium', () => {
  let page: Page;

  it('draws the note added by the CLI as a marker on the traffic chart, its text on hover', async () => {
    page = await newPage('light', 1440);
    await signIn(page);
    await page.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
    const marker = page.locator('.chart .annotation-marker');
    await expect.poll(() => marker.count(), POLL).toBe(1);
    expect(await marker.getAttribute('aria-label')).toBe('Note: v2 deployed');
    await marker.hover();
    await expect.poll(() => marker.locator('.annotation-tip').isVisible(), POLL).toBe(true);
    expect(await marker.locator('.annotation-tip').innerText()).toBe('v2 deployed');
    await page.screenshot({ path: join(SHOTS, 'annotations-1440-light.png'), fullPage: true });
  });

  it('saves the filters in force as a segment, and applying it gives the filtered API figures', async () => {
    await page.goto(`${dashboard}/projects/${PROJECT}?${RANGE}&filters=page%3D%3D%2Fpricing`);
    await page.locator('.segments-menu > summary').click();
    await page.getByLabel('Save these filters as a segment').fill('Pricing readers');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(() => page.getByRole('button', { name: 'Pricing readers', exact: true }).count(), POLL)
      .toBe(1);

    await page.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
    await expect.poll(() => page.locator('#visitors').innerText(), POLL).toBe('5');
    await page.locator('.segments-menu > summary').click();
    await page.getByRole('button', { name: 'Pricing readers', exact: true }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('filters'), POLL).toBe('page==/pricing');
    const filtered = await apiSummary('page==/pricing');
    expect(filtered.visitors).toBe(3);
    await expect
      .poll(() => page.locator('.top-figures:not(.is-stale) #visitors').innerText(), POLL)
      .toBe(String(filtered.visitors));
    await page.locator('.segments-menu > summary').click();
    await page.screenshot({ path: join(SHOTS, 'segments-1440-light.png'), fullPage: true });
  });

  it('reads at 390 px and in dark mode', async () => {
    for (const [scheme, width] of [
      ['dark', 1440],
      ['light', 390],
      ['dark', 390],
    ] as const) {
      // The signed-in session of the first page.
      const shot = await newPage(scheme, width, await page.context().storageState());
      await shot.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
      await expect.poll(() => shot.locator('.chart .annotation-marker').count(), POLL).toBe(1);
      await expect.poll(() => shot.locator('#visitors').innerText(), POLL).toBe('5');
      // At 1440 the Segments menu open, at 390 the note tapped open.
      if (width === 390) await shot.locator('.chart .annotation-marker').click();
      else await shot.locator('.segments-menu > summary').click();
      await shot.screenshot({ path: join(SHOTS, `annotations-${width}-${scheme}.png`), fullPage: true });
      // The page is no wider than the screen.
      expect(await shot.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('removes a note and a segment from the page: gone from the chart, the menu and the API', async () => {
    await page.goto(`${dashboard}/projects/${PROJECT}?${RANGE}`);
    await expect.poll(() => page.locator('.chart .annotation-marker').count(), POLL).toBe(1);
    await page.locator('.annotation-add > summary').click();
    await expect
      .poll(() => page.getByRole('list', { name: 'Notes on this project' }).innerText(), POLL)
      .toContain('v2 deployed');
    await page.screenshot({ path: join(SHOTS, 'annotations-list-1440-light.png'), fullPage: true });
    await page.getByRole('button', { name: 'Remove the note v2 deployed' }).click();
    await expect.poll(() => page.locator('.chart .annotation-marker').count(), POLL).toBe(0);
    expect((await readApi<{ annotations: unknown[] }>('annotations')).annotations).toEqual([]);

    await page.locator('.segments-menu > summary').click();
    await page.getByRole('button', { name: 'Remove the segment Pricing readers' }).click();
    await expect
      .poll(() => page.getByRole('button', { name: 'Pricing readers', exact: true }).count(), POLL)
      .toBe(0);
    expect((await readApi<{ segments: unknown[] }>('segments')).segments).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});

async function readApi<T>(what: string): Promise<T> {
  const response = await fetch(`${dashboard}/api/v1/projects/${PROJECT}/${what}`, {
    headers: { authorization: `Bearer ${readKey}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}
