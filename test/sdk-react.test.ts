// @tally/react in real headless Chromium against a real gateway process: a React application (StrictMode,
// its own pushState router) served from another 127.0.0.1 origin, with pageviews from <TrackPageviews>,
// an event and identify from useTally(); the records are read from the gateway's record log.
import { fileURLToPath } from 'node:url';
import type { IngestRecord } from '@tally/contract';
import { FileTokenStore } from '@tally/tokens';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium, type Site, startSite } from './support/browser.ts';
import { eventually, type GatewayProcess, startGatewayProcess, tempDataDir } from './support/processes.ts';
import { openRecordReader, type RecordReader } from './support/record-log.ts';

let browser: Browser;
let site: Site;
let gateway: GatewayProcess;
let records: RecordReader;
let token: string;

async function bundleApp(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./support/react-app.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    define: { 'process.env.NODE_ENV': '"development"' }, // development React: StrictMode doubles effects
  });
  return result.outputFiles[0]?.text ?? '';
}

beforeAll(async () => {
  const dataDir = tempDataDir();
  ({ token } = await new FileTokenStore(dataDir).create('sdk-react', 'public'));
  let app: string;
  [browser, site, gateway, app] = await Promise.all([
    launchChromium(),
    startSite(),
    startGatewayProcess({ TALLY_DATA_DIR: dataDir, RATE_LIMIT_PER_HOUR: '100000' }),
    bundleApp(),
  ]);
  records = openRecordReader(dataDir);
  site.serve('/app.js', app, 'text/javascript');
  site.serve(
    '/react/',
    '<!doctype html><html><head><meta charset="utf-8"><title>React shop</title>' +
      `<script>TALLY_TEST_CONFIG = ${JSON.stringify({ token, endpoint: gateway.url })}</script></head>` +
      '<body><div id="root"></div><script src="/app.js"></script></body></html>',
  );
});
afterAll(async () => {
  await records?.close();
  await browser?.close();
  await site?.close();
  await gateway?.stop();
});

const dataOf = (record: IngestRecord) => record.data as Record<string, unknown>;

it('counts route changes once each, and sends events and identify from useTally()', async () => {
  const context = await browser.newContext({ locale: 'en-US' });
  try {
    const page = await context.newPage();
    await page.goto(`${site.url}/react/`);
    await page.locator('#route').getByText('/react/').waitFor();
    await page.click('#to-pricing');
    await page.locator('#route').getByText('/react/pricing').waitFor();
    await page.click('#buy');
    await page.click('#to-checkout');
    await page.locator('#route').getByText('/react/checkout').waitFor();
    await page.goBack(); // popstate → the router's path changes → a pageview
    await page.locator('#route').getByText('/react/pricing').waitFor();
    await page.click('#sign-in');

    let session = '';
    await eventually(10_000, 'the app to render', async () => {
      session = ((await page.evaluate('appSessionId')) as string | undefined) ?? '';
      return session !== '';
    });
    // The tracker sends in order: once identify has landed, everything before it has.
    const [identify] = await records.waitFor('identify', (r) => r.type === 'identify');
    expect(identify?.data).toMatchObject({ customer_id: 'cus_react', session_id: session });

    // The log keeps one topic per record type, so each type is checked in its own order.
    const mine = (await records.all()).filter((r) => r.data.session_id === session);
    const pageviews = mine.filter((r) => r.type === 'pageview');
    expect(pageviews.map((r) => [dataOf(r).path, dataOf(r).referrer])).toEqual([
      ['/react/', null],
      ['/react/pricing', `${site.url}/react/`],
      ['/react/checkout', `${site.url}/react/pricing`],
      ['/react/pricing', `${site.url}/react/checkout`],
    ]);
    const events = mine.filter((r) => r.type === 'event');
    expect(events.map((r) => [dataOf(r).event_name, dataOf(r).path, dataOf(r).event_data])).toEqual([
      ['purchase_clicked', '/react/pricing', { plan: 'pro' }],
    ]);
    expect(mine.filter((r) => r.type === 'identify')).toHaveLength(1);
  } finally {
    await context.close();
  }
});
