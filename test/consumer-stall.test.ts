// A consumer whose warehouse refuses its requests for good reports not ready, within CONSUMER_STALL_MS and
// saying why, and its metrics say so; once the warehouse takes its batches again it is ready again. The
// warehouse is a real ClickHouse engine (CLICKHOUSE_URL when set, else ClickHouse's HTTP interface over
// chDB) behind a tiny HTTP server of the test's own that answers 431 (not a ClickHouse error: what Node
// answers a URL over 16 KiB) while told to: the fault of issue 21, where both consumers of a group stopped
// with 36,200 records waiting while /readyz answered ready. As its own process (the analytics consumer, on
// the embedded log) and under npm start (its admin server, and the dashboard's health view).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { FileTokenStore } from '@tally/tokens';
import { afterEach, expect, inject, it } from 'vitest';
import { checkHealthView } from './support/browser.ts';
import { eventually, spawnTallyService, tempDataDir } from './support/processes.ts';
import { BROWSER, pipelineEnv, send, startTallyProcess } from './support/tally-process.ts';
import { EVERYTHING, startWarehouseFront } from './support/warehouse-front.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface Readiness {
  status: number;
  body: { status: string; detail?: string };
}
const readiness = async (adminUrl: string): Promise<Readiness> => {
  const res = await fetch(`${adminUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as Readiness['body'] };
};
/** A gauge's value for the analytics group, from the process's /metrics. */
const gauge = async (adminUrl: string, name: string): Promise<number | null> => {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const match = new RegExp(`^${name}\\{group="analytics"\\} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
};

const STALL_MS = '1500';

it('as its own process: not ready with the reason and the lag while the warehouse answers 431, ready once it lands', async () => {
  const dataDir = tempDataDir();
  const front = await startWarehouseFront(inject('clickhouseUrl'));
  cleanups.push(() => front.close());
  front.refuse = EVERYTHING;
  // Records waiting in the embedded log before the consumer starts.
  const log = openEmbeddedLog({ path: join(dataDir, 'log') });
  await log.append(
    Array.from({ length: 5 }, () =>
      testRecord('pageview', { project_id: 'stall-process', user_agent: BROWSER }),
    ),
  );
  await log.close();
  const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
  const consumer = await spawnTallyService(
    'services/analytics-consumer/src/main.ts',
    {
      ...inherited,
      ...pipelineEnv({
        TALLY_DATA_DIR: dataDir,
        CLICKHOUSE_URL: front.url,
        CLICKHOUSE_DATABASE: `stall_${randomUUID().replace(/-/g, '')}`,
        CONSUMER_STALL_MS: STALL_MS,
      }),
    },
    60_000,
  );
  cleanups.push(() => consumer.stop());

  let last: Readiness | null = null;
  await eventually(60_000, 'the consumer reporting not ready', async () => {
    last = await readiness(consumer.adminUrl);
    return last.status === 503;
  });
  const stalled = last as unknown as Readiness;
  expect(stalled.body.status).toBe('unavailable');
  expect(stalled.body.detail).toMatch(
    /^consumer group analytics is stalled: 5 records waiting, no batch committed for \d+ s; last failure: warehouse failure \(WarehouseError HTTP 431\): the warehouse answered HTTP 431 without a ClickHouse error$/,
  );
  expect(await gauge(consumer.adminUrl, 'tally_consumer_lag_records')).toBe(5);
  expect(await gauge(consumer.adminUrl, 'tally_consumer_last_progress_seconds')).toBeGreaterThanOrEqual(
    Number(STALL_MS) / 1000,
  );
  expect(front.refused).toBeGreaterThan(0);

  // The proxy is mended: the next attempt opens and migrates the warehouse and lands the batch.
  front.refuse = null;
  await eventually(
    90_000,
    'the consumer ready again',
    async () => (await readiness(consumer.adminUrl)).status === 200,
  );
  await eventually(
    30_000,
    'no lag',
    async () => (await gauge(consumer.adminUrl, 'tally_consumer_lag_records')) === 0,
  );
  expect(consumer.output()).not.toMatch(/stall-process|https:\/\/example\.com/);
}, 240_000);

it('under npm start: /readyz and the health view say which group is stalled and why, until it lands again', async () => {
  const dataDir = tempDataDir();
  const front = await startWarehouseFront(inject('clickhouseUrl'));
  cleanups.push(() => front.close());
  const project = 'stall-npm-start';
  const store = new FileTokenStore(dataDir);
  const token = (await store.create(project, 'public')).token;
  const readKey = (await store.create(project, 'read')).token;
  const tally = await startTallyProcess({
    TALLY_DATA_DIR: dataDir,
    CLICKHOUSE_URL: front.url,
    CLICKHOUSE_DATABASE: `stall_${randomUUID().replace(/-/g, '')}`,
    CONSUMER_STALL_MS: STALL_MS,
    GATEWAY_WORKERS: '1',
  });
  cleanups.push(() => tally.stop());
  expect((await readiness(tally.adminUrl)).status).toBe(200);
  const dashboard = tally.endpoints.dashboardUrl as string;
  const health = async () => {
    const res = await fetch(`${dashboard}/api/v1/projects/${project}/health`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as {
      types: Array<{ type: string; landed_last_hour: number }>;
      consumers: Array<{
        group: string;
        status: string;
        lag: number;
        stalled_seconds: number | null;
        reason: string | null;
        source: string;
      }> | null;
    };
  };

  const pageview = (i: number) => ({
    type: 'pageview',
    data: { session_id: `s${i}`, visitor_fingerprint: `v${i}`, url: 'https://stall.example/' },
  });
  // A first record lands: the group has committed (the log then counts its lag).
  expect((await send(tally.url, token, pageview(0))).status).toBe(202);
  await eventually(60_000, 'the first pageview landing', async () =>
    (await health()).types.some((t) => t.type === 'pageview' && t.landed_last_hour === 1),
  );
  // Landed, then committed: nothing held any more.
  await eventually(
    30_000,
    'its batch committed',
    async () => (await gauge(tally.adminUrl, 'tally_consumer_lag_records')) === 0,
  );

  // The warehouse refuses the consumers' inserts (the dashboard's reads pass).
  front.refuse = (url) => /^\s*INSERT/i.test(url.searchParams.get('query') ?? '');
  for (let i = 1; i <= 3; i++) expect((await send(tally.url, token, pageview(i))).status).toBe(202);
  let last: Readiness | null = null;
  await eventually(60_000, 'npm start reporting not ready', async () => {
    last = await readiness(tally.adminUrl);
    return last.status === 503;
  });
  expect((last as unknown as Readiness).body.detail).toMatch(
    /^consumer group analytics is stalled: 3 records waiting, no batch committed for \d+ s; last failure: warehouse failure \(WarehouseError HTTP 431\)/,
  );
  const analytics = (await health()).consumers?.find((c) => c.group === 'analytics');
  expect(analytics).toMatchObject({ status: 'stalled', lag: 3, source: 'consumers' });
  expect(analytics?.stalled_seconds).toBeGreaterThanOrEqual(1);
  expect(analytics?.reason).toContain('HTTP 431');
  expect((await health()).consumers?.find((c) => c.group === 'revenue')).toMatchObject({ status: 'ok' });

  // What a person sees: the stalled group first, in red, on a desktop and on a phone, light and dark.
  await checkHealthView(
    { dashboard, dataDir, project, email: 'stall@example.com' },
    'health-stalled',
    async (page) => {
      const alert = page.locator('#consumers-alert');
      await alert.waitFor();
      const said = await alert.innerText();
      expect(said).toMatch(/Consumer group analytics stalled for .+: .*HTTP 431/);
      expect(said).toContain('3 waiting records');
    },
  );

  front.refuse = null;
  await eventually(
    90_000,
    'npm start ready again',
    async () => (await readiness(tally.adminUrl)).status === 200,
  );
  await eventually(
    30_000,
    'the group shown landing',
    async () => (await health()).consumers?.find((c) => c.group === 'analytics')?.status === 'ok',
  );
}, 240_000);
