// Batches that used to stop a consumer for good, through the real landers, the real embedded log and
// @clickhouse/client against a real ClickHouse engine (CLICKHOUSE_URL when set, else ClickHouse's HTTP
// interface over chDB): pageviews dated in 150 months in one batch (one INSERT block over the engine's
// partitions limit, error 252, retried for ever), and batches of thousands of records of one project (their
// ids looked up in a URL over the interface's 16 KiB, answered 431 and taken for an outage, retried for
// ever). Each lands completely, and copies of its records change nothing.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnalyticsConsumer } from '@tally/analytics-consumer';
import { ConsumerMetrics, type RunningBatchLoop } from '@tally/consumer';
import { type EmbeddedRecordLog, openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { startRevenueConsumer } from '@tally/revenue-consumer';
import { migrate, openClickHouseWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { eventually } from './support/processes.ts';
import { BROWSER } from './support/tally-process.ts';

let dir: string;
let log: EmbeddedRecordLog;
let warehouse: Warehouse;
const metrics = new ConsumerMetrics();
const loops: RunningBatchLoop[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tally-consumer-batches-'));
  log = openEmbeddedLog({ path: join(dir, 'log') });
  warehouse = await openClickHouseWarehouse({
    url: inject('clickhouseUrl'),
    database: `batches_${randomUUID().replace(/-/g, '')}`,
  });
  await migrate(warehouse);
  // Batches of up to 5,000 records, landed as soon as the log has handed them over.
  const batch = { maxRecords: 5000, maxWaitMs: 500 };
  loops.push(startAnalyticsConsumer({ log, warehouse, batch, metrics }));
  loops.push(startRevenueConsumer({ log, warehouse, batch, metrics }));
});

afterAll(async () => {
  for (const loop of loops) await loop.stop();
  await log?.close();
  await warehouse?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every group's lag in the log. */
const backlog = async () => (await log.backlog?.()) ?? [];
const count = async (sql: string, params: Record<string, string>) =>
  (await warehouse.query<{ n: number }>(sql, params))[0]?.n;

it('lands a batch of pageviews dated in 150 different months, and their visits', async () => {
  const project = 'months';
  const records = Array.from({ length: 150 }, (_, i) => {
    const timestamp = Date.UTC(2010, i, 15, 12);
    return testRecord('pageview', {
      project_id: project,
      timestamp,
      user_agent: BROWSER, // not a bot's: in visits
      data: { session_id: `s${i}`, visitor_fingerprint: `v${i}`, url: 'https://months.example/' },
    });
  });
  await log.append(records);
  // Committed once the events, their ids and their visits are all stored.
  await eventually(90_000, 'the 150 months landing', async () =>
    (await backlog()).some((b) => b.group === 'analytics' && b.topic === 'pageview' && b.lag === 0),
  );
  expect(
    await count('SELECT count() AS n FROM events FINAL WHERE project_id = {p:String}', { p: project }),
  ).toBe(150);
  expect(
    await count('SELECT count() AS n FROM visits FINAL WHERE project_id = {p:String}', { p: project }),
  ).toBe(150);
  expect(await log.deadLetters.list()).toEqual([]);
});

it('lands a batch of 5,000 pageviews of one project, and ignores their copies dated another day', async () => {
  const project = 'thousands';
  const day = Date.UTC(2026, 2, 10, 9);
  const records = Array.from({ length: 5000 }, (_, i) =>
    testRecord('pageview', {
      project_id: project,
      timestamp: day + i * 1000,
      data: { session_id: `s${i % 700}`, visitor_fingerprint: `v${i % 700}`, url: 'https://many.example/' },
    }),
  );
  await log.append(records);
  const landed = () =>
    count('SELECT count() AS n FROM events FINAL WHERE project_id = {p:String}', { p: project });
  await eventually(120_000, 'the 5,000 pageviews landing', async () => (await landed()) === 5000);
  await eventually(120_000, 'the batch committed', async () =>
    (await backlog()).every((b) => b.group !== 'analytics' || b.lag === 0),
  );
  // The same records again, a day later (a retry that crossed midnight): each id is found stored.
  await log.append(records.map((r) => ({ ...r, timestamp: r.timestamp + 86_400_000 })));
  await eventually(120_000, 'the copies consumed', async () => {
    return (await backlog()).every((b) => b.group !== 'analytics' || b.lag === 0);
  });
  expect(await landed()).toBe(5000);
  expect(
    await count(
      "SELECT count() AS n FROM events FINAL WHERE project_id = {p:String} AND toDate(timestamp) = '2026-03-11'",
      { p: project },
    ),
  ).toBe(0);
  expect(await log.deadLetters.list()).toEqual([]);
}, 300_000);

it('lands a batch of 1,000 revenue records of one project, each transaction once', async () => {
  const project = 'revenue-many';
  const records = Array.from({ length: 1000 }, (_, i) =>
    testRecord('revenue', {
      project_id: project,
      data: {
        session_id: `s${i % 10}`,
        visitor_fingerprint: `v${i % 10}`,
        customer_id: `c${i % 10}`,
        amount: 1,
        currency: 'USD',
        event_type: 'purchase',
        // Long transaction ids (as a processor's may be): the lookup's parameter is 250 KB.
        transaction_id: `${'t'.repeat(200)}_${i}_${randomUUID()}`,
      },
    }),
  );
  await log.append(records);
  const stored = () =>
    count('SELECT count() AS n FROM revenue FINAL WHERE project_id = {p:String}', { p: project });
  await eventually(120_000, 'the 1,000 revenue records landing', async () => (await stored()) === 1000);
  await eventually(120_000, 'the batch committed', async () =>
    (await backlog()).every((b) => b.group !== 'revenue' || b.lag === 0),
  );
  // Other records (new ids) of the same transactions: each transaction is found stored.
  await log.append(records.map((r) => ({ ...r, id: randomUUID() })));
  await eventually(120_000, 'the second records consumed', async () => {
    return (await backlog()).every((b) => b.group !== 'revenue' || b.lag === 0);
  });
  expect(await count('SELECT count() AS n FROM revenue WHERE project_id = {p:String}', { p: project })).toBe(
    1000,
  );
  expect(await log.deadLetters.list()).toEqual([]);
}, 300_000);
