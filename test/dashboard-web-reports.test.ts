// The Settings page's "Email reports" control in real headless Chromium against npm start's process: a
// member ticks the weekly report, saves, and the choice is what the API answers for them (and what the page
// shows after a reload); screenshots at 1440 px light and 390 px dark.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium, watchedPage } from './support/browser.ts';
import { ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'reports-site';
const EMAIL = 'reports@example.com';
const PASSWORD = 'a long enough password';
const POLL = { timeout: 20_000, interval: 100 };

let browser: Browser;
let running: TallyProcess;
let dashboard: string;
let signInToken: string;
const contexts: BrowserContext[] = [];
const consoleErrors: string[] = [];

const newPage = (
  colorScheme: 'light' | 'dark',
  width: number,
  storageState?: Awaited<ReturnType<BrowserContext['storageState']>>,
): Promise<Page> =>
  watchedPage(browser, { contexts, errors: consoleErrors }, colorScheme, width, storageState);

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await buildWebIfStale();
  const dataDir = tempDataDir();
  await new FileTokenStore(dataDir).create(PROJECT, 'public');
  const env = pipelineEnv({ TALLY_DATA_DIR: dataDir });
  const printed = await tally(['users', 'add', EMAIL, '--project', PROJECT], env);
  signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  [browser, running] = await Promise.all([launchChromium(), startTallyProcess({ TALLY_DATA_DIR: dataDir })]);
  dashboard = running.endpoints.dashboardUrl as string;
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await running?.stop('SIGTERM');
});

describe('the email reports control of the Settings page', () => {
  let page: Page;
  const mine = () =>
    page.evaluate(
      `fetch('/api/v1/projects/${PROJECT}/report-subscription').then((r) => r.json())`,
    ) as Promise<{ weekly: boolean; monthly: boolean }>;

  it("saves the member's weekly report, as the API then answers", async () => {
    page = await newPage('light', 1440);
    await page.goto(`${dashboard}/set-password#token=${signInToken}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(/\/projects\/reports-site/);
    await page.goto(`${dashboard}/projects/${PROJECT}/settings`);
    const card = page.locator('section[aria-labelledby="reports-title"]');
    await card.waitFor();
    expect(await card.getByLabel('Weekly').isChecked()).toBe(false);
    expect(await card.getByLabel('Monthly').isChecked()).toBe(false);
    await card.getByLabel('Weekly').check();
    await card.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => card.locator('output').innerText(), POLL)
      .toBe('Saved: you get the weekly report.');
    expect(await mine()).toEqual({ weekly: true, monthly: false });
    await page.reload();
    await card.waitFor();
    expect(await card.getByLabel('Weekly').isChecked()).toBe(true);
    await card.screenshot({ path: join(SHOTS, 'settings-email-reports-1440-light.png') });
    // Both off again.
    await card.getByLabel('Weekly').uncheck();
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.locator('output').innerText(), POLL).toBe('Saved: no email reports.');
    expect(await mine()).toEqual({ weekly: false, monthly: false });
  });

  it('reads at 390 px in dark mode', async () => {
    const shot = await newPage('dark', 390, await page.context().storageState());
    await shot.goto(`${dashboard}/projects/${PROJECT}/settings`);
    const card = shot.locator('section[aria-labelledby="reports-title"]');
    await card.waitFor();
    await card.screenshot({ path: join(SHOTS, 'settings-email-reports-390-dark.png') });
    expect(await shot.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(consoleErrors).toEqual([]);
  });
});
