// The browser tracker (the script-tag bundle, exactly as built for production) in real headless Chromium,
// against a real gateway process. Pages come from a static site on another 127.0.0.1 port, so every send
// is cross-origin and goes through the gateway's CORS. Records are checked where they land: the embedded
// record log in the gateway's TALLY_DATA_DIR.
import { createServer } from 'node:net';
import type { IngestRecord } from '@tally/contract';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildScriptBundle } from '../packages/core/scripts/bundle.ts';
import { launchChromium, type Site, startSite } from './support/browser.ts';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.ts';
import { eventually, type GatewayProcess, startGatewayProcess, tempDataDir } from './support/processes.ts';
import { openRecordReader, type RecordReader } from './support/record-log.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let browser: Browser;
let site: Site;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, site] = await Promise.all([launchChromium(), startSite()]);
  site.serve('/tally.js', await buildScriptBundle(), 'text/javascript');
  site.serve('/elsewhere', '<!doctype html><title>Elsewhere</title><p>a page without the tracker</p>');
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

/** A page that loads tally.js with a script tag, as a website would. */
function servePage(path: string, title: string, endpoint: string, token: string) {
  site.serve(
    path,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
      // The site is on 127.0.0.1: a local page, which sends nothing unless allowed.
      `<script src="/tally.js" data-token="${token}" data-endpoint="${endpoint}" data-allow-localhost></script></head>` +
      '<body><p>Tally test page</p></body></html>',
  );
}

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ locale: 'en-US' });
  contexts.push(context);
  return context.newPage();
}

/** Evaluates an expression in the page (strings, since the repository type-checks without the DOM library). */
const inPage = <T>(page: Page, expression: string) => page.evaluate(expression) as Promise<T>;

const sessionOf = (record: IngestRecord) => record.data.session_id;
const dataOf = (record: IngestRecord) => record.data as Record<string, unknown>;

describe('tracker against a real gateway', () => {
  let gateway: GatewayProcess;
  let records: RecordReader;
  let token: string;

  beforeAll(async () => {
    const dataDir = tempDataDir();
    ({ token } = await new FileTokenStore(dataDir).create('sdk-browser', 'public'));
    gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir, RATE_LIMIT_PER_HOUR: '100000' });
    records = openRecordReader(dataDir);
  });
  afterAll(async () => {
    await records?.close();
    await gateway?.stop();
  });

  it('counts the page load, a custom event and identify, cross-origin, without cookies or storage', async () => {
    servePage('/shop/', 'Pricing', gateway.url, token);
    const page = await newPage();
    await page.goto(`${site.url}/shop/pricing?utm_source=newsletter&utm_medium=email`, {
      referer: 'https://www.google.com/',
    });
    expect(new URL(site.url).origin).not.toBe(new URL(gateway.url).origin);
    const session = await inPage<string>(page, 'tally.getSessionId()');
    expect(session).toMatch(UUID);
    await inPage(page, `tally.event('signup_clicked', { plan: 'pro', seats: 3 })`);
    await inPage(page, `tally.identify('cus_42')`);

    const [pageview] = await records.waitFor(
      'the pageview',
      (r) => r.type === 'pageview' && sessionOf(r) === session,
    );
    expect(pageview?.data).toMatchObject({
      url: `${site.url}/shop/pricing?utm_source=newsletter&utm_medium=email`,
      path: '/shop/pricing',
      title: 'Pricing',
      referrer: 'https://www.google.com/',
      locale: 'en-US',
      utm_source: 'newsletter',
      utm_medium: 'email',
    });
    expect(pageview?.id).toMatch(UUID); // the id the tracker chose, kept by the gateway
    expect(pageview?.visitor_fingerprint_derived).toBe(true); // cookieless: the server derives the visitor
    expect(pageview?.user_agent).toContain('HeadlessChrome');
    expect(pageview?.client_timestamp).toBeTypeOf('number');

    const [event] = await records.waitFor('the event', (r) => r.type === 'event' && sessionOf(r) === session);
    expect(event?.data).toMatchObject({
      event_name: 'signup_clicked',
      event_data: { plan: 'pro', seats: 3 },
      path: '/shop/pricing',
    });
    const [identify] = await records.waitFor(
      'identify',
      (r) => r.type === 'identify' && sessionOf(r) === session,
    );
    expect(dataOf(identify as IngestRecord).customer_id).toBe('cus_42');
    // One visitor: the server derived the same id for the three records of this browser.
    expect(new Set([pageview, event, identify].map((r) => r?.data.visitor_fingerprint)).size).toBe(1);

    expect(await page.context().cookies()).toEqual([]);
    expect(await inPage<number>(page, 'localStorage.length + sessionStorage.length')).toBe(0);
  });

  it('counts each SPA navigation once: pushState, replaceState and popstate', async () => {
    servePage('/spa/', 'App', gateway.url, token);
    const page = await newPage();
    await page.goto(`${site.url}/spa/`);
    const session = await inPage<string>(page, 'tally.getSessionId()');
    await inPage(page, `history.pushState({}, '', '/spa/a')`);
    await inPage(page, `history.replaceState({}, '', '/spa/a')`); // same URL: not a navigation
    await inPage(page, `history.pushState({}, '', '/spa/a#details')`); // hash only: not a pageview
    await inPage(page, `history.replaceState({}, '', '/spa/a?tab=2')`); // query changed: a pageview
    await inPage(page, `history.pushState({}, '', '/spa/b')`);
    await inPage(
      page,
      `new Promise((resolve) => { addEventListener('popstate', () => resolve(), { once: true }); history.back(); })`,
    );
    // The queue sends in order, so once this last event has landed every pageview before it has too.
    await inPage(page, `tally.event('done')`);
    await records.waitFor('the last event', (r) => r.type === 'event' && sessionOf(r) === session);

    const pageviews = (await records.all()).filter((r) => r.type === 'pageview' && sessionOf(r) === session);
    expect(pageviews.map((r) => [dataOf(r).url, dataOf(r).path, dataOf(r).referrer])).toEqual([
      [`${site.url}/spa/`, '/spa/', null],
      [`${site.url}/spa/a`, '/spa/a', `${site.url}/spa/`],
      [`${site.url}/spa/a?tab=2`, '/spa/a', `${site.url}/spa/a`],
      [`${site.url}/spa/b`, '/spa/b', `${site.url}/spa/a?tab=2`],
      [`${site.url}/spa/a?tab=2`, '/spa/a', `${site.url}/spa/b`],
    ]);
    expect(new Set(pageviews.map((r) => r.id)).size).toBe(5);
  });

  /**
   * A tracked page whose first POST (the pageview) the proxy answers 503, so that the pageview waits in the
   * queue for its retry. The page's clock is paused (Playwright's clock), so that retry cannot fire: the
   * only way out for the record is the flush when the page is hidden or left.
   */
  async function pageWithRecordWaiting(path: string) {
    const proxy = await startFaultProxy(gateway.url, [{ status: 503, headers: { 'retry-after': '5' } }]);
    servePage(path, 'Leaving', proxy.url, token);
    const page = await newPage();
    await page.clock.install();
    await page.clock.pauseAt(Date.now() + 1000);
    await page.goto(`${site.url}${path}`);
    await eventually(10_000, 'the 503 answered', async () => proxy.posts[0]?.status === 503);
    await eventually(10_000, 'the tracker to see the 503', async () => {
      return (await inPage<number>(page, 'tally.pending()')) === 1;
    });
    // Normal sends: fetch, as a simple text/plain request (no preflight) with the token in the envelope.
    expect(proxy.posts[0]?.headers['content-type']).toMatch(/^text\/plain/);
    expect(JSON.parse(proxy.posts[0]?.body ?? '{}').token).toBe(token);
    return { proxy, page };
  }

  /** Checks the second POST the proxy saw was the beacon of the first one's record, and that it landed once. */
  async function expectBeaconLanded(proxy: FaultProxy, path: string) {
    await eventually(
      10_000,
      'the beacon',
      async () => proxy.posts.length === 2 && proxy.posts[1]?.status === 202,
    );
    const beacon = proxy.posts[1];
    expect(beacon?.headers['content-type']).toMatch(/^text\/plain/);
    expect(beacon?.headers['x-api-token']).toBeUndefined();
    const body = JSON.parse(beacon?.body ?? '{}');
    expect(body.token).toBe(token);
    expect(body.id).toBe(JSON.parse(proxy.posts[0]?.body ?? '{}').id); // the same record, not a new one
    const landed = await records.waitFor('the beaconed pageview', (r) => r.id === body.id);
    expect(landed).toHaveLength(1);
    expect(dataOf(landed[0] as IngestRecord).path).toBe(path);
  }

  it('flushes a record waiting for its retry with sendBeacon when the page is left', async () => {
    // Leaving fires pagehide and visibilitychange (hidden); either flushes, and the second finds nothing left.
    const { proxy, page } = await pageWithRecordWaiting('/leave/');
    try {
      await page.goto(`${site.url}/elsewhere`);
      await expectBeaconLanded(proxy, '/leave/');
    } finally {
      await proxy.close();
    }
  });

  it('flushes on pagehide alone, as when the page enters the back-forward cache', async () => {
    const { proxy, page } = await pageWithRecordWaiting('/bfcache/');
    try {
      expect(await inPage<string>(page, 'document.visibilityState')).toBe('visible');
      await inPage(page, `dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))`);
      expect(await inPage<number>(page, 'tally.pending()')).toBe(0);
      await expectBeaconLanded(proxy, '/bfcache/');
    } finally {
      await proxy.close();
    }
  });
});

describe('tracker under a real 429', () => {
  // The gateway allows one request per hour. Its 429 carries Retry-After (~3600 s), exposed through CORS.
  // The page's clock is Playwright's fake clock, so the test can check that nothing is sent before that
  // time and that the retry goes out after it without waiting an hour. The gateway's own window cannot be
  // fast-forwarded: it is passed by restarting the gateway on the same port and data directory (its rate
  // limit counters live in memory), with a normal limit.
  let dataDir: string;
  let token: string;
  let port: number;
  const gateways: GatewayProcess[] = [];
  let records: RecordReader;

  beforeAll(async () => {
    dataDir = tempDataDir();
    ({ token } = await new FileTokenStore(dataDir).create('sdk-browser-429', 'public'));
    port = await freePort();
    gateways.push(
      await startGatewayProcess({ TALLY_DATA_DIR: dataDir, PORT: String(port), RATE_LIMIT_PER_HOUR: '1' }),
    );
    records = openRecordReader(dataDir);
  });
  afterAll(async () => {
    await records?.close();
    for (const gateway of gateways) await gateway.stop();
  });

  it('holds the queue until Retry-After has passed, then retries with the same record id', async () => {
    const endpoint = `http://127.0.0.1:${port}`;
    servePage('/limited/', 'Limited', endpoint, token);
    const page = await newPage();
    const posts: Array<{ id: string; name?: string; status?: number; retryAfter?: string | null }> = [];
    page.on('response', async (response) => {
      const request = response.request();
      if (request.method() !== 'POST' || !request.url().startsWith(endpoint)) return;
      const body = JSON.parse(request.postData() ?? '{}');
      posts.push({
        id: body.id,
        name: body.data?.event_name,
        status: response.status(),
        retryAfter: await response.headerValue('retry-after'),
      });
    });
    await page.clock.install();
    await page.goto(`${site.url}/limited/`);
    const session = await inPage<string>(page, 'tally.getSessionId()');
    await records.waitFor('the pageview', (r) => r.type === 'pageview' && sessionOf(r) === session);

    await inPage(page, `tally.event('limited')`);
    await eventually(10_000, 'the 429', async () => posts.some((p) => p.status === 429));
    const limited = posts.find((p) => p.status === 429);
    expect(limited?.name).toBe('limited');
    const retryAfterS = Number(limited?.retryAfter);
    expect(retryAfterS).toBeGreaterThan(3500); // the real header, read through CORS
    expect(retryAfterS).toBeLessThanOrEqual(3600);
    await eventually(10_000, 'the tracker to see the 429', async () => {
      return (await inPage<number>(page, 'tally.pending()')) === 1;
    });
    await inPage(page, `tally.event('held')`); // queued behind the limited one: the rate limit is per client

    // Up to a minute before Retry-After: nothing has been sent. (The page's clock keeps flowing in real
    // time, so the margin leaves room for the restart below.)
    await page.clock.runFor(retryAfterS * 1000 - 60_000);
    expect(await inPage<number>(page, 'tally.pending()')).toBe(2);
    expect(posts).toHaveLength(2);

    // The server's hour passes (a restart resets its in-memory counters) and so does the page's.
    const first = gateways[0] as GatewayProcess;
    await first.stop();
    gateways.push(
      await startGatewayProcess({ TALLY_DATA_DIR: dataDir, PORT: String(port), RATE_LIMIT_PER_HOUR: '1000' }),
    );
    await page.clock.runFor(61_000);

    const [retried] = await records.waitFor('the retried event', (r) => dataOf(r).event_name === 'limited');
    await records.waitFor('the held event', (r) => dataOf(r).event_name === 'held');
    expect(retried?.id).toBe(limited?.id);
    await eventually(10_000, 'every response seen', async () => posts.length === 4);
    expect(posts.map((p) => [p.name, p.status])).toEqual([
      [undefined, 202],
      ['limited', 429],
      ['limited', 202],
      ['held', 202],
    ]);
    const all = await records.all();
    expect(all.filter((r) => dataOf(r).event_name === 'limited')).toHaveLength(1);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}
