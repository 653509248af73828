// @tally/react in real headless Chromium against a real gateway process, under each React version the package
// supports (18 and 19): a React application (StrictMode, its own pushState router) served from another
// 127.0.0.1 origin, with pageviews from <TrackPageviews>, an event and identify from useTally(); the records
// are read from the gateway's record log.
//
// The application is bundled once per version. React 18 is installed beside React 19 under the aliases
// react-18 / react-dom-18; esbuild's `alias` (packages/react/scripts/react-versions.ts) points every `react`
// and `react-dom` import in the bundle (the app's, @tally/react's and react-dom's own) at that copy, and the
// bundle's metafile is checked to hold one React only. The browser and the gateway are shared; each version
// gets its own site (its own origin, so its own tracker storage and session).
import { fileURLToPath } from 'node:url';
import type { IngestRecord } from '@tally/contract';
import { FileTokenStore } from '@tally/tokens';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertOneReact,
  REACT_VERSIONS,
  type ReactVersion,
  reactBuildOptions,
} from '../packages/react/scripts/react-versions.ts';
import { launchChromium, type Site, startSite } from './support/browser.ts';
import { eventually, type GatewayProcess, startGatewayProcess, tempDataDir } from './support/processes.ts';
import { openRecordReader, type RecordReader } from './support/record-log.ts';

let browser: Browser;
let gateway: GatewayProcess;
let records: RecordReader;
let token: string;

async function bundleApp(version: ReactVersion): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./support/react-app.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"development"' }, // development React: StrictMode doubles effects
    ...reactBuildOptions(version),
  });
  assertOneReact(result.metafile, version);
  return result.outputFiles[0]?.text ?? '';
}

beforeAll(async () => {
  const dataDir = tempDataDir();
  ({ token } = await new FileTokenStore(dataDir).create('sdk-react', 'public'));
  [browser, gateway] = await Promise.all([
    launchChromium(),
    startGatewayProcess({ TALLY_DATA_DIR: dataDir, RATE_LIMIT_PER_HOUR: '100000' }),
  ]);
  records = openRecordReader(dataDir);
});
afterAll(async () => {
  await records?.close();
  await browser?.close();
  await gateway?.stop();
});

const dataOf = (record: IngestRecord) => record.data as Record<string, unknown>;

describe.each(REACT_VERSIONS)('React $major', (version) => {
  let site: Site;
  beforeAll(async () => {
    let app: string;
    [site, app] = await Promise.all([startSite(), bundleApp(version)]);
    site.serve('/app.js', app, 'text/javascript');
    site.serve(
      '/react/',
      '<!doctype html><html><head><meta charset="utf-8"><title>React shop</title>' +
        `<script>TALLY_TEST_CONFIG = ${JSON.stringify({ token, endpoint: gateway.url })}</script></head>` +
        '<body><div id="root"></div><script src="/app.js"></script></body></html>',
    );
  });
  afterAll(async () => {
    await site?.close();
  });

  it('counts route changes once each, and sends events and identify from useTally()', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    try {
      const page = await context.newPage();
      await page.goto(`${site.url}/react/`);
      await page.locator('#route').getByText('/react/').waitFor();
      // The page runs the React version under test, react and react-dom alike.
      const major = new RegExp(`^${version.major}\\.`);
      expect(await page.evaluate('appReactVersions')).toEqual({
        react: expect.stringMatching(major),
        reactDom: expect.stringMatching(major),
      });
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
      // The tracker sends in order: once this session's identify has landed, everything before it has. (The
      // gateway is shared by the versions' tests, so records are told apart by session.)
      const [identify] = await records.waitFor(
        'identify',
        (r) => r.type === 'identify' && r.data.session_id === session,
      );
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
});
