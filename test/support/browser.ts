// Real headless Chromium for the SDK tests (Debian's chromium package driven by playwright-core; a test
// tool's own browser download cannot work here), and a static site on 127.0.0.1 to serve test pages from
// an origin other than the gateway's, so that every send from a page is a cross-origin request (CORS).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildWebIfStale } from '../../services/dashboard/web/scripts/build.mjs';
import { ROOT, tally as tallyCli } from './processes.ts';
import { pipelineEnv } from './tally-process.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** A normal desktop Chrome's User-Agent: HeadlessChrome is recognised as a bot and left out of the figures. */
export const CHROME_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const run = promisify(execFile);

/**
 * Launches headless Chromium, installing Debian's package through infra/chromium/install.sh if it is missing.
 * `extraArgs`: more switches, e.g. `--host-resolver-rules=MAP *.test 127.0.0.1` for pages on other hosts.
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    try {
      await run('bash', [`${ROOT}infra/chromium/install.sh`], { timeout: 600_000 });
    } catch (error) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM_PATH} and infra/chromium/install.sh failed ` +
          `(${(error as Error).message}). Run it as root (it installs Debian's chromium package), ` +
          'or set CHROMIUM_PATH to a Chromium binary.',
      );
    }
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs],
  });
}

/**
 * A page of a new context (English, UTC, `width` × 900 px, the colour scheme, a signed-in session's storage
 * when given) whose console errors and uncaught exceptions go into `errors`; the context into `contexts`,
 * for the test to close.
 */
export async function watchedPage(
  browser: Browser,
  track: { contexts: BrowserContext[]; errors: string[] },
  colorScheme: 'light' | 'dark',
  width: number,
  storageState?: Awaited<ReturnType<BrowserContext['storageState']>>,
): Promise<Page> {
  const context = await browser.newContext({
    ...(storageState ? { storageState } : {}),
    locale: 'en-US',
    timezoneId: 'UTC',
    colorScheme,
    viewport: { width, height: 900 },
  });
  track.contexts.push(context);
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') track.errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (error) => track.errors.push(`${page.url()}: uncaught ${error.message}`));
  return page;
}

export interface Site {
  /** Origin of the site, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Serves `body` for every path that starts with `prefix` (the longest matching prefix wins). */
  serve(prefix: string, body: string, contentType?: string): void;
  close(): Promise<void>;
}

export async function startSite(): Promise<Site> {
  const routes = new Map<string, { body: string; contentType: string }>();
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname;
    const prefix = [...routes.keys()]
      .filter((p) => path.startsWith(p))
      .sort((a, b) => b.length - a.length)[0];
    const route = prefix === undefined ? undefined : routes.get(prefix);
    if (!route) {
      response.writeHead(404).end('not found');
      return;
    }
    response
      .writeHead(200, { 'content-type': route.contentType, 'cache-control': 'no-store' })
      .end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    serve(prefix, body, contentType = 'text/html; charset=utf-8') {
      routes.set(prefix, { body, contentType });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Signs a new member of `project` in to the dashboard of a running Tally (`tally users add` on its data
 * directory) and yields a signed-in page per viewport, each in a context of its own: the first sets the
 * password from the printed link, the others sign in with it. Each context is closed after its turn.
 */
async function* memberPages(
  browser: Browser,
  tally: { dashboard: string; dataDir: string; project: string; email: string },
  views: readonly { width: number; colorScheme: 'light' | 'dark' }[],
): AsyncGenerator<{ page: Page; width: number; colorScheme: 'light' | 'dark' }> {
  const printed = await tallyCli(
    ['users', 'add', tally.email, '--project', tally.project],
    pipelineEnv({ TALLY_DATA_DIR: tally.dataDir }),
  );
  const signInToken = /set-password#token=(\S+)/.exec(printed)?.[1];
  if (!signInToken) throw new Error(`tally users add printed no password link: ${printed}`);
  const password = 'a long enough password';
  for (const [i, { width, colorScheme }] of views.entries()) {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
    try {
      const page = await context.newPage();
      if (i === 0) {
        await page.goto(`${tally.dashboard}/set-password#token=${signInToken}`);
        await page.getByLabel('New password').fill(password);
        await page.getByLabel('Repeat it').fill(password);
        await page.getByRole('button', { name: 'Set password and sign in' }).click();
      } else {
        await page.goto(`${tally.dashboard}/login`);
        await page.getByLabel('Email').fill(tally.email);
        await page.getByLabel('Password').fill(password);
        await page.getByRole('button', { name: 'Sign in' }).click();
      }
      await page.waitForURL(
        (url) => !url.pathname.startsWith('/set-password') && !url.pathname.startsWith('/login'),
      );
      yield { page, width, colorScheme };
    } finally {
      await context.close();
    }
  }
}

/**
 * A project's health view as a new member sees it (memberPages) on a desktop in light and a phone in dark:
 * on each, once `check` has read the page, nothing is wider than the screen, and a full-page screenshot goes
 * to test-output/dashboard-web/<shot>-<width>-<scheme>.png.
 */
export async function checkHealthView(
  tally: { dashboard: string; dataDir: string; project: string; email: string },
  shot: string,
  check: (page: Page) => Promise<void>,
): Promise<void> {
  await buildWebIfStale();
  const shots = join(ROOT, 'test-output', 'dashboard-web');
  mkdirSync(shots, { recursive: true });
  const browser = await launchChromium();
  try {
    for await (const { page, width, colorScheme } of memberPages(browser, tally, [
      { width: 1440, colorScheme: 'light' },
      { width: 390, colorScheme: 'dark' },
    ])) {
      await page.goto(`${tally.dashboard}/projects/${tally.project}/health`);
      await check(page);
      const overflow = Number(
        await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      );
      expect(overflow, `sideways overflow at ${width} px`).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(shots, `${shot}-${width}-${colorScheme}.png`), fullPage: true });
    }
  } finally {
    await browser.close();
  }
}
