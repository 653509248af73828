// Pageviews, events and identify through the whole pipeline as `npm start` runs it, on a known set of
// records: the traffic report (`tally report traffic`), enrichment, and identity stitching (anonymous
// pageviews of a visitor attributed to the customer a later identify names, without rewriting history).
import { FileTokenStore } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import {
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
  type TallyProcess,
} from './support/tally-process.ts';

const DAY = '2026-05-04';
const at = (time: string) => Date.parse(`${DAY}T${time}Z`);

describe('traffic through the whole pipeline (npm start)', () => {
  let dataDir: string;
  let running: TallyProcess;
  let warehouse: Warehouse;

  beforeAll(async () => {
    dataDir = tempDataDir();
    const store = new FileTokenStore(dataDir);
    const { token } = await store.create('traffic', 'public');
    await store.close();
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    warehouse = await publishedWarehouse(dataDir);

    const records = [
      // visitor A: two pageviews and an event, anonymous at first
      {
        type: 'pageview',
        data: {
          visitor_fingerprint: 'fp_a',
          session_id: 's_a',
          url: 'https://shop.example/',
          referrer: 'https://www.google.com/',
          timestamp: at('09:00:00'),
        },
      },
      {
        type: 'pageview',
        data: {
          visitor_fingerprint: 'fp_a',
          session_id: 's_a',
          url: 'https://shop.example/pricing',
          path: '/pricing',
          referrer: 'https://shop.example/',
          timestamp: at('09:01:00'),
        },
      },
      {
        type: 'event',
        data: {
          visitor_fingerprint: 'fp_a',
          session_id: 's_a',
          event_name: 'signup_clicked',
          event_data: { plan: 'pro' },
          timestamp: at('09:02:00'),
        },
      },
      // visitor B: from a campaign
      {
        type: 'pageview',
        data: {
          visitor_fingerprint: 'fp_b',
          session_id: 's_b',
          url: 'https://shop.example/',
          utm_source: 'newsletter',
          utm_medium: 'email',
          utm_campaign: 'spring',
          timestamp: at('10:00:00'),
        },
      },
      // outside the range
      {
        type: 'pageview',
        data: {
          visitor_fingerprint: 'fp_b',
          session_id: 's_b2',
          url: 'https://shop.example/',
          timestamp: Date.parse('2026-05-06T10:00:00Z'),
        },
      },
      // A signs in
      {
        type: 'identify',
        data: {
          visitor_fingerprint: 'fp_a',
          session_id: 's_a',
          customer_id: 'cus_42',
          timestamp: at('09:05:00'),
        },
      },
    ];
    for (const record of records) expect((await send(running.url, token, record)).status).toBe(202);
    const bot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    const crawled = {
      type: 'pageview',
      data: { session_id: 's_bot', url: 'https://shop.example/', timestamp: at('11:00:00') },
    };
    expect((await send(running.url, token, crawled, bot)).status).toBe(202);

    await eventually(30_000, 'every record landing', async () => {
      const [row] = await warehouse.query<{ events: number; identities: number }>(
        "SELECT (SELECT count() FROM events FINAL WHERE project_id = 'traffic') AS events, " +
          "(SELECT count() FROM identities FINAL WHERE project_id = 'traffic') AS identities",
      );
      return row?.events === 6 && row.identities === 1;
    });
  });
  afterAll(async () => {
    await warehouse?.close();
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  it('reports pageviews, visitors, sessions and events of the range, without bots', async () => {
    const report = JSON.parse(
      await tally(
        ['report', 'traffic/overview', '--project', 'traffic', '--from', DAY, '--to', DAY, '--json'],
        pipelineEnv({ TALLY_DATA_DIR: dataDir }),
      ),
    );
    expect(report).toMatchObject({ pageviews: 3, visitors: 2, sessions: 2, events: 1, customers: 1 });
    expect(report.paths).toEqual([
      { path: '/', pageviews: 2, visitors: 2 },
      { path: '/pricing', pageviews: 1, visitors: 1 },
    ]);
    expect(report.referrer_sources).toEqual([
      { referrer_source: '', pageviews: 2, visitors: 2 },
      { referrer_source: 'Google', pageviews: 1, visitors: 1 },
    ]);
    expect(report.campaigns).toEqual([
      { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring', pageviews: 1, visitors: 1 },
    ]);
    expect(report.event_names).toEqual([{ event_name: 'signup_clicked', events: 1, visitors: 1 }]);
    expect(report.days).toEqual([{ day: DAY, pageviews: 3, visitors: 2, sessions: 2, events: 1 }]);
  });

  it('enriches pageviews with browser, OS, device, bot flag and referrer source', async () => {
    const rows = await warehouse.query(
      `SELECT path, browser, os, device_type, is_bot, referrer_source, referrer_medium FROM events FINAL
       WHERE project_id = 'traffic' AND type = 'pageview' AND timestamp < '2026-05-05' ORDER BY timestamp`,
    );
    expect(rows).toEqual([
      {
        path: '/',
        browser: 'Safari',
        os: 'macOS',
        device_type: 'desktop',
        is_bot: false,
        referrer_source: 'Google',
        referrer_medium: 'search',
      },
      {
        path: '/pricing',
        browser: 'Safari',
        os: 'macOS',
        device_type: 'desktop',
        is_bot: false,
        referrer_source: '',
        referrer_medium: '',
      },
      {
        path: '/',
        browser: 'Safari',
        os: 'macOS',
        device_type: 'desktop',
        is_bot: false,
        referrer_source: '',
        referrer_medium: '',
      },
      {
        path: '/',
        browser: 'Googlebot',
        os: '',
        device_type: 'bot',
        is_bot: true,
        referrer_source: '',
        referrer_medium: '',
      },
    ]);
  });

  it("attributes a visitor's earlier anonymous pageviews and events to the customer identify names", async () => {
    const sql = async (statement: string) =>
      (await tally(['sql', statement], pipelineEnv({ TALLY_DATA_DIR: dataDir })))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
    expect(
      await sql(
        "SELECT visitor_id, path, customer_id FROM pageviews WHERE project_id = 'traffic' AND timestamp < '2026-05-05' ORDER BY timestamp",
      ),
    ).toEqual([
      { visitor_id: 'fp_a', path: '/', customer_id: 'cus_42' },
      { visitor_id: 'fp_a', path: '/pricing', customer_id: 'cus_42' },
      { visitor_id: 'fp_b', path: '/', customer_id: '' },
    ]);
    expect(
      await sql("SELECT event_name, customer_id FROM custom_events WHERE project_id = 'traffic'"),
    ).toEqual([{ event_name: 'signup_clicked', customer_id: 'cus_42' }]);
    // The stored events are unchanged: attribution happens in the views, at read time.
    expect(
      await sql(
        "SELECT count() AS n FROM system.columns WHERE database = 'tally' AND table = 'events' AND name = 'customer_id'",
      ),
    ).toEqual([{ n: 0 }]);
    // Statements chDB cannot stream (SHOW, DESCRIBE, EXISTS, EXPLAIN) run too, through the running
    // process's HTTP interface.
    expect(await sql('SHOW TABLES')).toEqual(expect.arrayContaining([{ name: 'pageviews' }]));
    expect(await sql('DESCRIBE TABLE visits')).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'visitor_id' })]),
    );
    expect(await sql('EXISTS TABLE events')).toEqual([{ result: 1 }]);
  });

  it("gives analysts read-only credentials (tally warehouse credentials); their slow query does not hold the CLI's SELECT 1", async () => {
    const env = pipelineEnv({ TALLY_DATA_DIR: dataDir });
    const published = JSON.parse(await tally(['warehouse', 'credentials', '--json'], env)) as {
      url: string;
      database: string;
      analyst: { user: string; password: string };
      writer: { user: string; password: string };
    };
    expect(published).toMatchObject({
      database: 'tally',
      analyst: { user: 'analyst' },
      writer: { user: 'tally' },
    });
    expect(new URL(published.url).hostname).toBe('127.0.0.1');
    const human = await tally(['warehouse', 'credentials'], env);
    expect(human).toContain(`user analyst  password ${published.analyst.password}`);
    const auth = `Basic ${Buffer.from(`analyst:${published.analyst.password}`).toString('base64')}`;
    const ask = (query: string) =>
      fetch(`${published.url}/?default_format=JSONEachRow`, {
        method: 'POST',
        body: query,
        headers: { authorization: auth },
      });
    const count = "SELECT count() AS n FROM pageviews WHERE project_id = 'traffic'";
    const read = await ask(count);
    expect([read.status, [await read.json()]]).toEqual([200, await warehouse.query(count)]);
    for (const statement of [
      "INSERT INTO events (project_id) VALUES ('x')",
      'DROP TABLE events',
      'ALTER TABLE events DELETE WHERE 1',
    ]) {
      const refused = await ask(statement);
      expect([refused.status, refused.headers.get('x-clickhouse-exception-code')]).toEqual([500, '164']);
    }
    const order: string[] = [];
    const slow = ask("SELECT sleep(3), 'analyst_slow'").then(() => order.push('analyst'));
    // Once the engine runs it (system.processes, as the writer sees it).
    await eventually(
      10_000,
      'the analyst query to run',
      async () =>
        (
          await warehouse.query(
            "SELECT 1 FROM system.processes WHERE query LIKE '%analyst_slow%' AND query NOT LIKE '%system.processes%'",
          )
        ).length === 1,
    );
    // The CLI's own path (the writer, through @clickhouse/client), without a process start in the race.
    await warehouse.query('SELECT 1').then(() => order.push('SELECT 1'));
    await slow;
    expect(order).toEqual(['SELECT 1', 'analyst']);
  });
});
