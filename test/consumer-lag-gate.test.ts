// npm start holds ingestion back while its consumers are too far behind (GATEWAY_MAX_CONSUMER_LAG;
// lag-gate.ts in @tally/consumer, admission.ts in @tally/gateway): once a consumer group has that many
// records waiting, every request is answered 503 with Retry-After: 5 and counted in
// tally_gateway_shed_total{reason="consumer_lag"}, until the group has caught up; and every record that
// was acknowledged lands, once. The consumers fall behind for real: the warehouse (a real ClickHouse
// engine, CLICKHOUSE_URL when set, else ClickHouse's HTTP interface over chDB) sits behind a front of the
// test's own that refuses their inserts while told to. Meanwhile the health view says that ingestion is
// held back, by which group, and until when (its API, and the page in Chromium, with screenshots).
import { randomUUID } from 'node:crypto';
import { FileTokenStore } from '@tally/tokens';
import { openClickHouseWarehouse } from '@tally/warehouse';
import { afterEach, expect, inject, it } from 'vitest';
import { checkHealthView } from './support/browser.ts';
import { eventually, tempDataDir } from './support/processes.ts';
import { send, startTallyProcess } from './support/tally-process.ts';
import { startWarehouseFront } from './support/warehouse-front.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const MAX_LAG = 20;

/** The shed counter for a reason, summed over the gateway's event loops, from the process's /metrics. */
async function shed(adminUrl: string, reason: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('tally_gateway_shed_total{') && line.includes(`reason="${reason}"`)) {
      total += Number(line.split(' ').at(-1));
    }
  }
  return total;
}

/** The analytics group's lag, from the process's /metrics. */
async function lag(adminUrl: string): Promise<number | null> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const match = /^tally_consumer_lag_records\{group="analytics"\} (\S+)$/m.exec(text);
  return match ? Number(match[1]) : null;
}

it('answers 503 with Retry-After while a consumer group is GATEWAY_MAX_CONSUMER_LAG behind, and everything acknowledged lands once', async () => {
  const dataDir = tempDataDir();
  const front = await startWarehouseFront(inject('clickhouseUrl'));
  cleanups.push(() => front.close());
  const database = `lag_gate_${randomUUID().replace(/-/g, '')}`;
  const project = 'lag-gate';
  const store = new FileTokenStore(dataDir);
  const token = (await store.create(project, 'public')).token;
  const readKey = (await store.create(project, 'read')).token;
  const tally = await startTallyProcess({
    TALLY_DATA_DIR: dataDir,
    CLICKHOUSE_URL: front.url,
    CLICKHOUSE_DATABASE: database,
    GATEWAY_MAX_CONSUMER_LAG: String(MAX_LAG),
  });
  cleanups.push(() => tally.stop());
  const warehouse = await openClickHouseWarehouse({ url: inject('clickhouseUrl'), database });
  cleanups.push(() => warehouse.close());
  const landed = async () =>
    (
      await warehouse.query<{ id: string; copies: number }>(
        'SELECT id, count() AS copies FROM events WHERE project_id = {project:String} GROUP BY id',
        { project },
      )
    ).map((row) => ({ id: row.id, copies: Number(row.copies) }));

  const acknowledged: string[] = [];
  const pageview = (id: string) => ({
    type: 'pageview',
    id,
    data: { session_id: 's', visitor_fingerprint: `v-${id}`, url: 'https://lag-gate.example/' },
  });
  const sendOne = async () => {
    const id = randomUUID();
    const response = await send(tally.url, token, pageview(id));
    if (response.status === 202) acknowledged.push(id);
    return response;
  };

  // Landing keeps up: far more than the bound goes through, a few at a time.
  for (let i = 0; i < 2 * MAX_LAG; i++) {
    expect((await sendOne()).status).toBe(202);
    if (i % 5 === 4) {
      const count = acknowledged.length;
      await eventually(30_000, 'the records landing', async () => (await landed()).length === count);
    }
  }
  expect(await shed(tally.adminUrl, 'consumer_lag')).toBe(0);
  // Every batch committed, not only its rows visible (its ids and visits are written after them): the lag
  // counts from here.
  await eventually(30_000, 'no lag', async () => (await lag(tally.adminUrl)) === 0);

  // The warehouse refuses the consumers' inserts: the records wait, and past the bound the gateway refuses.
  front.refuse = (url) => /^\s*INSERT/i.test(url.searchParams.get('query') ?? '');
  const before = acknowledged.length;
  let refusal: Response | null = null;
  await eventually(30_000, 'a 503 once the consumers are behind', async () => {
    const response = await sendOne();
    if (response.status === 202) return false;
    refusal = response;
    return true;
  });
  const held = refusal as unknown as Response;
  expect(held.status).toBe(503);
  expect(held.headers.get('retry-after')).toBe('5');
  expect(await held.json()).toEqual({ error: 'Service temporarily unavailable, retry later' });
  // Up to the bound, and at most what came in between two readings of the lag (every 500 ms) beyond it.
  expect(acknowledged.length - before).toBeGreaterThanOrEqual(MAX_LAG);
  // It stays closed while the consumers are behind, answering before the body is read.
  for (let i = 0; i < 5; i++) expect((await sendOne()).status).toBe(503);
  expect(await shed(tally.adminUrl, 'consumer_lag')).toBeGreaterThanOrEqual(6);

  // The health view says so: its API, and the page, first of all, on a desktop and on a phone.
  const dashboard = tally.endpoints.dashboardUrl as string;
  const heldBack = async () => {
    const res = await fetch(`${dashboard}/api/v1/projects/${project}/health`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { ingestion_held_back: { lag: number } | null };
    return body.ingestion_held_back;
  };
  const said = await heldBack();
  expect(said).toMatchObject({ group: 'analytics', max_lag: MAX_LAG, reopens_below: 18 });
  expect(said?.lag).toBeGreaterThanOrEqual(MAX_LAG);
  await checkHealthView(
    { dashboard, dataDir, project, email: 'held@example.com' },
    'health-held-back',
    async (page) => {
      const banner = page.locator('#ingestion-held-back');
      await banner.waitFor();
      expect(await banner.innerText()).toMatch(
        /^Ingestion held back for .+: consumer group analytics has \d+ records waiting \(the bound, GATEWAY_MAX_CONSUMER_LAG, is 20\)\. The gateway answers every request 503 with Retry-After until fewer than 18 wait/,
      );
    },
  );

  // The warehouse takes the inserts again: the consumers catch up and ingestion is accepted again.
  front.refuse = null;
  await eventually(60_000, 'ingestion accepted again', async () => (await sendOne()).status === 202);
  expect(await heldBack()).toBeNull();
  const count = acknowledged.length;
  await eventually(
    60_000,
    'every acknowledged record landing',
    async () => (await landed()).length === count,
  );
  const rows = await landed();
  expect(rows.map((r) => r.id).sort()).toEqual([...acknowledged].sort());
  expect(rows.every((r) => r.copies === 1)).toBe(true);
});
