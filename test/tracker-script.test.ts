// The tracker as a site gets it: a page on another origin with nothing but
// <script src="http://127.0.0.1:PORT/tally.js" data-token=…> (no data-endpoint), served by Tally itself
// (npm start's all-in-one process), in real headless Chromium. What the page sends must land in the
// warehouse; opted-out and local pages must send nothing; a project's allowed origins must refuse others.
// The pages are on `shop.test`, `other.test` (mapped to 127.0.0.1 by Chromium's host resolver rules, so
// that they are ordinary, non-local sites) and `localhost`, all served by one node:http server on port 0.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FileTokenStore } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import type { Browser, BrowserContext, Page, Request, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTrackerIfStale } from '../packages/core/scripts/tracker-bundles.mjs';
import { CHROME_UA, launchChromium } from './support/browser.ts';
import { startFaultProxy } from './support/fault-proxy.ts';
import { eventually, tempDataDir } from './support/processes.ts';
import { publishedWarehouse, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

let browser: Browser;
let tally: TallyProcess;
let warehouse: Warehouse;
let pages: Server;
let sitePort: number;
const html = new Map<string, string>();
const tokens: Record<'open' | 'guarded', string> = { open: '', guarded: '' };
const contexts: BrowserContext[] = [];

const site = (host: string, path: string) => `http://${host}:${sitePort}${path}`;

beforeAll(async () => {
  // What `npm start` builds first: the bundles the gateway serves.
  await buildTrackerIfStale(() => {});
  pages = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname;
    const body = html.get(path);
    if (path.startsWith('/files/')) {
      response.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4\n');
    } else if (body === undefined) {
      response.writeHead(404).end('not found');
    } else {
      response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        .end(body);
    }
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  sitePort = (pages.address() as AddressInfo).port;

  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  tokens.open = (await store.create('tracker-open', 'public')).token;
  tokens.guarded = (await store.create('tracker-guarded', 'public')).token;
  await store.setAllowedOrigins('tracker-guarded', [site('shop.test', '')]);
  await store.close();
  [browser, tally] = await Promise.all([
    // The User-Agent for the whole browser, not a context's override: a beacon sent while a page is left
    // carries the browser's own (HeadlessChrome, a bot), which would keep its record out of every figure.
    launchChromium(['--host-resolver-rules=MAP *.test 127.0.0.1', `--user-agent=${CHROME_UA}`]),
    startTallyProcess({ TALLY_DATA_DIR: dataDir }),
  ]);
  warehouse = await publishedWarehouse(dataDir);
});
afterAll(async () => {
  await browser?.close();
  await warehouse?.close();
  await tally?.stop('SIGTERM');
  pages?.closeAllConnections();
  await new Promise((resolve) => pages?.close(resolve));
});
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

/** A page at `path` whose head holds the snippet (if any) and the script tag, as a website would. */
function servePage(path: string, script: string, options: { snippet?: string; body?: string } = {}) {
  html.set(
    path,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>${options.snippet ?? ''}` +
      `${script}</head><body><p>Tally tracker test</p>${options.body ?? ''}</body></html>`,
  );
}
const scriptTag = (file: string, token: string, attributes = '') =>
  `<script defer src="${tally.url}/${file}" data-token="${token}" ${attributes}></script>`;
const QUEUE_SNIPPET =
  '<script>window.tally = window.tally || function () { (window.tally.q = window.tally.q || []).push(arguments) }</script>';

/** A page in a fresh browser context, with every request to /api/ingest and its answer recorded. */
async function newPage() {
  const context = await browser.newContext({ locale: 'en-US' });
  contexts.push(context);
  const page = await context.newPage();
  const ingest: Request[] = [];
  const answers: Response[] = [];
  const failures: string[] = [];
  // The context's events, not the page's: a keepalive send outlives the page a link leaves.
  context.on('request', (request) => {
    if (request.url().endsWith('/api/ingest')) ingest.push(request);
  });
  context.on('response', (response) => {
    if (response.url().endsWith('/api/ingest')) answers.push(response);
  });
  context.on('requestfailed', (request) => {
    if (request.url().endsWith('/api/ingest')) failures.push(request.failure()?.errorText ?? 'failed');
  });
  return { page, ingest, answers, failures };
}

/** Waits until the script has started (window.tally is the tracker, not the snippet's stub). */
const started = (page: Page) => page.waitForFunction('typeof window.tally?.getSessionId === "function"');
const inPage = <T>(page: Page, expression: string) => page.evaluate(expression) as Promise<T>;

interface EventRow {
  type: string;
  path: string;
  url: string;
  event_name: string;
  event_data: Record<string, string>;
}

/** The rows of a session in the warehouse, once `count` have landed. */
async function rowsOf(project: string, session: string, count: number): Promise<EventRow[]> {
  let rows: EventRow[] = [];
  await eventually(30_000, `${count} records of the session landing`, async () => {
    rows = await warehouse.query<EventRow>(
      'SELECT type, path, url, event_name, event_data FROM events FINAL ' +
        'WHERE project_id = {project:String} AND session_id = {session:String} AND NOT is_bot ORDER BY timestamp',
      { project, session },
    );
    return rows.length >= count;
  }).catch((error: Error) => {
    throw new Error(`${error.message}; landed: ${JSON.stringify(rows.map((r) => [r.type, r.event_name]))}`);
  });
  return rows;
}

describe('tally.js served by Tally, on a page of another origin', () => {
  it('sends the pageview and SPA navigations to the origin it was loaded from', async () => {
    servePage('/spa/', scriptTag('tally.js', tokens.open));
    const { page, ingest } = await newPage();
    await page.goto(site('shop.test', '/spa/'));
    await started(page);
    const session = await inPage<string>(page, 'tally.getSessionId()');
    await inPage(page, `history.pushState({}, '', '/spa/checkout')`);

    const rows = await rowsOf('tracker-open', session, 2);
    expect(rows.map((r) => [r.type, r.path, r.url])).toEqual([
      ['pageview', '/spa/', site('shop.test', '/spa/')],
      ['pageview', '/spa/checkout', site('shop.test', '/spa/checkout')],
    ]);
    // No data-endpoint: sent to the script's origin (Tally), not the page's; simple requests, no preflight.
    expect(ingest.map((r) => [r.url(), r.method()])).toEqual([
      [`${tally.url}/api/ingest`, 'POST'],
      [`${tally.url}/api/ingest`, 'POST'],
    ]);
    // Each request's own answer, awaited: a record can land and be read back before Chromium has told
    // Playwright of the answer that acknowledged it (one CI run under load saw one 202 of two, 2026-11-28).
    expect(await Promise.all(ingest.map(async (r) => (await r.response())?.status()))).toEqual([202, 202]);
  });

  it('tally.full.js sends outbound link clicks and file downloads as events with the URL', async () => {
    servePage('/links/', scriptTag('tally.full.js', tokens.open, 'data-outbound-links data-file-downloads'), {
      body:
        `<a id="report" href="/files/report.pdf" download>report</a>` +
        `<a id="out" href="${site('other.test', '/elsewhere')}">elsewhere</a>`,
    });
    html.set('/elsewhere', '<!doctype html><title>Elsewhere</title><p>another site</p>');
    const { page, ingest, answers, failures } = await newPage();
    await page.goto(site('shop.test', '/links/'));
    await started(page);
    const session = await inPage<string>(page, 'tally.getSessionId()');
    const download = page.waitForEvent('download');
    await page.click('#report');
    await (await download).cancel();
    // The download's record lands before the outbound click, so that the click's record is sent at once
    // (fetch keepalive). One queued behind a send still in flight leaves by the beacon: the next test.
    await rowsOf('tracker-open', session, 2);
    await Promise.all([page.waitForURL(site('other.test', '/elsewhere')), page.click('#out')]);

    const rows = await rowsOf('tracker-open', session, 3).catch((error: Error) => {
      const seen = { sent: ingest.length, answers: answers.map((r) => r.status()), failures };
      throw new Error(`${error.message}; requests: ${JSON.stringify(seen)}`);
    });
    expect(rows.map((r) => [r.type, r.event_name, r.event_data])).toEqual([
      ['pageview', '', {}],
      ['event', 'File Download', { url: site('shop.test', '/files/report.pdf') }],
      ['event', 'Outbound Link: Click', { url: site('other.test', '/elsewhere') }],
    ]);
  });

  it('tally.full.js: an outbound click queued behind a send in flight leaves with the page, by the beacon', async () => {
    // Between the page and Tally, a slow network: the page's pageview is held until the test lets it go.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await startFaultProxy(tally.url, [{ until: released }]);
    const arrived = () => slow.posts.map((post) => JSON.parse(post.body).type);
    try {
      const attributes = `data-endpoint="${slow.url}" data-outbound-links`;
      servePage('/slow/', scriptTag('tally.full.js', tokens.open, attributes), {
        body: `<a id="out" href="${site('other.test', '/elsewhere')}">elsewhere</a>`,
      });
      html.set('/elsewhere', '<!doctype html><title>Elsewhere</title><p>another site</p>');
      const { page } = await newPage();
      await page.goto(site('shop.test', '/slow/'));
      await started(page);
      const session = await inPage<string>(page, 'tally.getSessionId()');
      await eventually(10_000, 'the pageview held on its way', async () => arrived().length === 1);
      expect(await inPage<number>(page, 'tally.pending()')).toBe(1);

      // The click's record waits behind the pageview's request; the page goes before that is answered, and
      // the record leaves with it (by the beacon of the pagehide or visibilitychange flush).
      await Promise.all([page.waitForURL(site('other.test', '/elsewhere')), page.click('#out')]);
      await eventually(10_000, 'the outbound record sent', async () => arrived().includes('event'));
      release();

      const rows = await rowsOf('tracker-open', session, 2);
      expect(rows.map((r) => [r.type, r.event_name, r.event_data])).toEqual([
        ['pageview', '', {}],
        ['event', 'Outbound Link: Click', { url: site('other.test', '/elsewhere') }],
      ]);
    } finally {
      release();
      await slow.close();
    }
  });

  it('runs calls queued before it loaded; an optOut among them, remembered, means nothing is sent', async () => {
    servePage('/optout/', scriptTag('tally.js', tokens.open), {
      snippet: `${QUEUE_SNIPPET}<script>tally('optOut'); tally('event', 'queued_while_out')</script>`,
    });
    const { page, ingest } = await newPage();
    await page.goto(site('shop.test', '/optout/'));
    await started(page);
    await inPage(page, `tally.event('while_out')`);
    expect(await inPage<string>(page, 'localStorage.tally_opt_out')).toBe('1');
    // Remembered: a new load of the page sends nothing either.
    await page.reload();
    await started(page);
    await inPage(page, `tally('event', 'still_out')`);
    expect(await inPage<number>(page, 'tally.pending()')).toBe(0);

    // Opting in again: the next event is sent, and it is the first request this browser ever made.
    await inPage(page, 'tally.optIn()');
    await inPage(page, `tally.event('opted_in')`);
    const session = await inPage<string>(page, 'tally.getSessionId()');
    const rows = await rowsOf('tracker-open', session, 1);
    expect(rows.map((r) => r.event_name)).toEqual(['opted_in']);
    await eventually(5000, 'the request seen', async () => ingest.length === 1);
    expect(ingest).toHaveLength(1);
  });

  it('sends nothing from localhost unless data-allow-localhost', async () => {
    servePage('/local/', scriptTag('tally.js', tokens.open));
    const { page, ingest } = await newPage();
    await page.goto(site('localhost', '/local/'));
    await started(page);
    await inPage(page, `tally.event('local')`);
    await inPage(page, `history.pushState({}, '', '/local/next')`);
    expect(await inPage<number>(page, 'tally.pending()')).toBe(0);

    // The same page allowed: its pageview lands, which also shows nothing was sent before it.
    servePage('/local-allowed/', scriptTag('tally.js', tokens.open, 'data-allow-localhost'));
    await page.goto(site('localhost', '/local-allowed/'));
    await started(page);
    const session = await inPage<string>(page, 'tally.getSessionId()');
    expect((await rowsOf('tracker-open', session, 1)).map((r) => r.path)).toEqual(['/local-allowed/']);
    expect(ingest.map((r) => JSON.parse(r.postData() ?? '{}').data?.path)).toEqual(['/local-allowed/']);
  });

  it('tally.full.js says once in the console why a localhost page is not counted, and not when it is', async () => {
    const hints = (page: Page) => {
      const said: string[] = [];
      page.on('console', (message) => {
        if (message.text().startsWith('[tally]')) said.push(message.text());
      });
      return said;
    };
    servePage('/local-full/', scriptTag('tally.full.js', tokens.open));
    const { page } = await newPage();
    const said = hints(page);
    await page.goto(site('localhost', '/local-full/'));
    await started(page);
    await inPage(page, `tally.event('local')`);
    await inPage(page, `history.pushState({}, '', '/local-full/next')`);
    await eventually(5000, 'the hint logged', async () => said.length > 0);
    expect(said).toEqual([
      expect.stringMatching(/not counted; the attribute data-allow-localhost counts it/),
    ]);

    servePage('/local-full-allowed/', scriptTag('tally.full.js', tokens.open, 'data-allow-localhost'));
    const allowed = await newPage();
    const quiet = hints(allowed.page);
    await allowed.page.goto(site('localhost', '/local-full-allowed/'));
    await started(allowed.page);
    await eventually(5000, 'its pageview answered', async () => allowed.answers.length > 0);
    expect(quiet).toEqual([]);
  });

  it('tally.full.js: hash routes are pageviews; excluded paths and Global Privacy Control send nothing', async () => {
    const full = (attributes: string) => scriptTag('tally.full.js', tokens.open, attributes);
    servePage('/hash/', full('data-hash-routing'));
    servePage('/private/page', full('data-exclude="/private/**"'));
    servePage('/gpc/', full('data-respect-dnt'));

    // Excluded, then with GPC on: nothing is queued or sent; the hash-routed page, loaded last, lands.
    const { page, ingest } = await newPage();
    await page.goto(site('shop.test', '/private/page'));
    await started(page);
    await inPage(page, `tally.event('excluded')`);
    expect(await inPage<number>(page, 'tally.pending()')).toBe(0);
    await page.addInitScript('Object.defineProperty(navigator, "globalPrivacyControl", { value: true })');
    await page.goto(site('shop.test', '/gpc/'));
    await started(page);
    await inPage(page, `tally.event('gpc')`);
    expect(await inPage<number>(page, 'tally.pending()')).toBe(0);

    const hashed = await newPage();
    await hashed.page.goto(site('shop.test', '/hash/'));
    await started(hashed.page);
    const session = await inPage<string>(hashed.page, 'tally.getSessionId()');
    await inPage(hashed.page, `location.hash = '#/pricing'`);
    const rows = await rowsOf('tracker-open', session, 2);
    expect(rows.map((r) => [r.type, r.url])).toEqual([
      ['pageview', site('shop.test', '/hash/')],
      ['pageview', site('shop.test', '/hash/#/pricing')],
    ]);
    expect(ingest).toEqual([]);
  });

  it("refuses a project's public token from an origin it does not allow (403), and nothing lands", async () => {
    servePage('/guarded/', scriptTag('tally.js', tokens.guarded));
    const other = await newPage();
    await other.page.goto(site('other.test', '/guarded/'));
    await started(other.page);
    const refusedSession = await inPage<string>(other.page, 'tally.getSessionId()');
    await eventually(10_000, 'the 403', async () => other.answers.length === 1);
    expect(other.answers[0]?.status()).toBe(403);
    expect(await other.answers[0]?.json()).toEqual({ error: 'Origin not allowed for this project' });
    // Not retried: a 403 is final.
    expect(await inPage<number>(other.page, 'tally.pending()')).toBe(0);

    const allowed = await newPage();
    await allowed.page.goto(site('shop.test', '/guarded/'));
    await started(allowed.page);
    const session = await inPage<string>(allowed.page, 'tally.getSessionId()');
    expect((await rowsOf('tracker-guarded', session, 1)).map((r) => r.url)).toEqual([
      site('shop.test', '/guarded/'),
    ]);
    const [refused] = await warehouse.query<{ n: number }>(
      "SELECT count() AS n FROM events FINAL WHERE project_id = 'tracker-guarded' AND session_id = {s:String}",
      { s: refusedSession },
    );
    expect(Number(refused?.n)).toBe(0);
  });
});
