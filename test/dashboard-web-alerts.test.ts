// The Health view's "Alerts" card in real headless Chromium against npm start's process (evaluating every
// second, ALERTS_INTERVAL_MS): an owner adds a rule that holds (dead letters of the project, set aside in
// the process's embedded record log before it started) and one that does not, through the card's form; the
// process fires the first to a webhook (a local server), and the card shows it firing, first, with since
// when. A bad rule is refused with the API's message. Screenshots at 1440 and 390 px, light and dark, go to
// test-output/dashboard-web/ to be looked at.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium, watchedPage } from './support/browser.ts';
import { ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'alerts-site';
const EMAIL = 'alerts-owner@example.com';
const PASSWORD = 'a long enough password';
const POLL = { timeout: 20_000, interval: 100 };

let browser: Browser;
let running: TallyProcess;
let dashboard: string;
let signInToken: string;
let hook: Server;
let hookUrl: string;
const received: Array<{ tally: { event: string; project: string; reason: string } }> = [];
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
  // Two records of the project set aside as dead letters a minute ago, as a consumer would.
  const log = openEmbeddedLog({ path: join(dataDir, 'log'), writer: true });
  await log.deadLetters.add(
    [0, 1].map((i) => ({
      id: `analytics:event:0:${i}`,
      group: 'analytics',
      topic: 'event',
      partition: 0,
      offset: i,
      failed_at: Date.now() - 60_000,
      error: 'refused',
      error_code: 'contract',
      record: testRecord('event', { project_id: PROJECT }),
    })),
  );
  await log.close();
  hook = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/slack`;
  const env = pipelineEnv({ TALLY_DATA_DIR: dataDir });
  const printed = await tally(['users', 'add', EMAIL, '--project', PROJECT], env);
  signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  [browser, running] = await Promise.all([
    launchChromium(),
    startTallyProcess({ TALLY_DATA_DIR: dataDir, ALERTS_INTERVAL_MS: '1000' }),
  ]);
  dashboard = running.endpoints.dashboardUrl as string;
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await running?.stop('SIGTERM');
  await new Promise<void>((resolve) => (hook ? hook.close(() => resolve()) : resolve()));
});

describe('the Alerts card of the Health view', () => {
  let page: Page;

  it('adds rules through its form; the one that holds fires to the webhook and is shown firing, first', async () => {
    page = await newPage('light', 1440);
    await page.goto(`${dashboard}/set-password#token=${signInToken}`);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(/\/projects\/alerts-site/);
    await page.goto(`${dashboard}/projects/${PROJECT}/health`);
    const card = page.locator('section[aria-labelledby="alerts-title"]');
    await card.locator('#alerts-none').waitFor();

    // A rule that does not hold: pageviews stalled for an hour (none ever landed).
    await card.locator('select[name="kind"]').selectOption('stalled');
    await card.locator('select[name="record_type"]').selectOption('pageview');
    await card.locator('input[name="threshold"]').fill('60');
    await card.locator('select[name="email"]').selectOption(EMAIL);
    await card.getByRole('button', { name: 'Add alert' }).click();
    await expect.poll(() => card.locator('#alert-rules > li').count(), POLL).toBe(1);

    // A bad one: the API's message is shown.
    await card.locator('select[name="kind"]').selectOption('traffic');
    await card.locator('select[name="direction"]').selectOption('drop');
    await card.locator('input[name="threshold"]').fill('150');
    await card.locator('input[name="webhook"]').fill(hookUrl);
    await card.getByRole('button', { name: 'Add alert' }).click();
    await expect
      .poll(() => card.locator('#alert-form-error').innerText(), POLL)
      .toBe('threshold of a traffic rule is percent: a whole number from 1 to 100');

    // A rule that holds: more than 1 dead letter in the last hour (there are 2).
    await card.locator('select[name="kind"]').selectOption('dead_letters');
    await card.locator('input[name="threshold"]').fill('1');
    await card.locator('input[name="webhook"]').fill(hookUrl);
    await card.getByRole('button', { name: 'Add alert' }).click();
    await expect.poll(() => card.locator('#alert-rules > li').count(), POLL).toBe(2);

    // The process evaluates every second: the webhook hears it fire, once.
    await expect.poll(() => received.length, POLL).toBe(1);
    expect(received[0]?.tally).toMatchObject({
      event: 'firing',
      project: PROJECT,
      reason: '2 records were set aside as dead letters in the last hour (more than 1)',
    });
    await page.reload();
    await card.locator('#alert-rules').waitFor();
    const first = card.locator('#alert-rules > li').first();
    expect(await first.getAttribute('data-status')).toBe('firing');
    expect(await first.locator('.status').innerText()).toMatch(/^Firing since /);
    expect(await first.locator('.alert-description').innerText()).toBe('more than 1 dead letters in an hour');
    expect(await first.locator('.alert-reason').innerText()).toBe(
      '2 records were set aside as dead letters in the last hour (more than 1)',
    );
    const second = card.locator('#alert-rules > li').nth(1);
    await expect.poll(() => second.getAttribute('data-status'), POLL).toBe('ok');
    expect(await second.locator('.alert-targets').innerText()).toBe(`To ${EMAIL}`);
    await page.screenshot({ path: join(SHOTS, 'health-alerts-1440-light.png'), fullPage: true });
    expect(received).toHaveLength(1);
  });

  for (const [scheme, width] of [
    ['dark', 1440],
    ['light', 390],
    ['dark', 390],
  ] as const) {
    it(`shows the card at ${width} px, ${scheme}, within the page's width`, async () => {
      const other = await newPage(scheme, width, await page.context().storageState());
      await other.goto(`${dashboard}/projects/${PROJECT}/health`);
      const card = other.locator('section[aria-labelledby="alerts-title"]');
      await card.locator('#alert-rules > li[data-status="firing"]').waitFor();
      const overflow = (await other.evaluate(
        'document.documentElement.scrollWidth - window.innerWidth',
      )) as number;
      expect(overflow).toBeLessThanOrEqual(0);
      await other.screenshot({ path: join(SHOTS, `health-alerts-${width}-${scheme}.png`), fullPage: true });
      await card.screenshot({ path: join(SHOTS, `health-alerts-card-${width}-${scheme}.png`) });
    });
  }

  it("logged no console error but the refused rule's 400", () => {
    expect(consoleErrors).toEqual([
      expect.stringMatching(
        /status of 400 \(Bad Request\) \(http:\/\/[^)]+\/api\/v1\/projects\/alerts-site\/alerts\)$/,
      ),
    ]);
  });
});
