// The analytics consumer as it runs (startAnalyticsConsumer, the batch loop, the start-up fill), on the real
// embedded log and real chDB, follows its log's holding of the partitions as a member of a Kafka group does:
// the visits it keeps in memory are forgotten when its holding changes (another member wrote them while the
// partitions were away), and once its partitions are another member's it writes no visit and commits
// nothing, so that the new holder lands the batch; and a member's visits that read another's replace them.
// The log's consumer is the embedded one, its holding and its loss set by the test (withHolding): with one
// consumer the embedded log keeps one holding for ever.
// (test/consumers-scale-out.test.ts runs members of a real Kafka group.)
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestRecord } from '@tally/contract';
import { openEmbeddedLog, type RecordLog } from '@tally/log';
import { anIngestRecord, aPolledMessage, withHolding } from '@tally/log/testing';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterInserts, beforeQueries } from '@tally/warehouse/testing';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { analyticsLander, startAnalyticsConsumer } from './consumer.ts';

const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const dir = mkdtempSync(join(tmpdir(), 'tally-analytics-holding-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
});
afterAll(async () => {
  await warehouse.close();
  rmSync(dir, { recursive: true, force: true });
});

const at = (time: string) => Date.parse(`2026-05-04T${time}:00Z`);

/** A pageview of visitor `v` of `project` at `time`, each in a session of its own. */
const pageview = (project: string, time: string): IngestRecord =>
  anIngestRecord('pageview', {
    id: randomUUID(),
    project_id: project,
    received_at: at(time),
    timestamp: at(time),
    client_timestamp: at(time),
    user_agent: BROWSER,
    data: { session_id: `s-${randomUUID()}`, visitor_fingerprint: 'v', url: `https://s.example/${time}` },
  });

/** The record ids of the stored visits of `project`, visit by visit. */
const visitIds = async (project: string) =>
  (
    await warehouse.query<{ ids: string[] }>(
      `SELECT arraySort(arrayConcat(pageview_ids, event_ids)) AS ids FROM visits FINAL
       WHERE project_id = {project:String} ORDER BY start`,
      { project },
    )
  ).map((v) => v.ids);

const ids = (...records: IngestRecord[]) => records.map((r) => r.id).sort();

/** The analytics group's lag on pageviews: records appended and not committed. */
const lag = async (log: RecordLog) =>
  ((await log.backlog?.()) ?? []).find((b) => b.group === 'analytics' && b.topic === 'pageview')?.lag;

it('forgets the visits it held when its holding changes: another member wrote them meanwhile', async () => {
  const project = 'holding-changed';
  const { log, holding } = withHolding(openEmbeddedLog({ path: join(dir, 'changed') }));
  const first = pageview(project, '10:00');
  await log.append([first]);
  const consumer = startAnalyticsConsumer({ log, warehouse, batch: { maxRecords: 100, maxWaitMs: 20 } });
  try {
    await vi.waitFor(async () => expect(await lag(log)).toBe(0), { timeout: 30_000, interval: 50 });
    expect(await visitIds(project)).toEqual([ids(first)]);

    // The partition went to another member, which landed a record of the same visitor, and came back.
    const other = analyticsLander(warehouse);
    const byOther = pageview(project, '10:05');
    const message = aPolledMessage(byOther);
    await other.land([{ message, row: other.prepare(message) }]);
    expect(await visitIds(project)).toEqual([ids(first, byOther)]);
    holding.id = 2;

    const third = pageview(project, '10:10');
    await log.append([third]);
    await vi.waitFor(async () => expect(await lag(log)).toBe(0), { timeout: 30_000, interval: 50 });
    // Folded from the stored visit, not from the one it held before: the other member's record is in it.
    expect(await visitIds(project)).toEqual([ids(first, byOther, third)]);
  } finally {
    await consumer.stop();
    await log.close();
  }
});

it('writes no visit once its partitions are another member’s, and leaves the batch to the new holder', async () => {
  const project = 'holding-lost';
  const { log, holding } = withHolding(openEmbeddedLog({ path: join(dir, 'lost') }));
  const first = pageview(project, '10:00');
  await log.append([first]);
  const warnings: string[] = [];
  const logger = { info: () => {}, error: () => {}, warn: (_: object, line: string) => warnings.push(line) };
  // The partitions move while a batch lands: after its rows are stored, before its visits are written.
  const losing = afterInserts(warehouse, (table, rows) => {
    if (table === 'events' && rows.length > 0) holding.lost = true;
  });
  const consumer = startAnalyticsConsumer({
    log,
    warehouse: losing,
    batch: { maxRecords: 100, maxWaitMs: 20 },
    logger,
  });
  try {
    await vi.waitFor(
      () => expect(warnings).toContain('analytics partitions moved to another member; batch left to it'),
      { timeout: 30_000, interval: 50 },
    );
  } finally {
    await consumer.stop();
  }
  // The record is stored (a row is harmless: its copy merges), but no visit was written from what this
  // member read.
  expect(
    await warehouse.query('SELECT id FROM events FINAL WHERE project_id = {project:String}', { project }),
  ).toEqual([{ id: first.id }]);
  expect(await visitIds(project)).toEqual([]);

  // Nor was the batch committed: the new holder gets it again from the group's position, and writes its
  // visits (committed, it would get nothing, and no visit would be written).
  holding.lost = false;
  holding.id = 2;
  const next = startAnalyticsConsumer({ log, warehouse, batch: { maxRecords: 100, maxWaitMs: 20 } });
  try {
    await vi.waitFor(async () => expect(await lag(log)).toBe(0), { timeout: 30_000, interval: 50 });
    expect(await visitIds(project)).toEqual([ids(first)]);
  } finally {
    await next.stop();
    await log.close();
  }
});

it('replaces the visits another member wrote with a write that read them, even one begun before', async () => {
  // While a partition moves, its new holder may begin folding a visitor before the member that held it
  // has written its last batch: the new holder's read, held back here, comes after that write and sees
  // it. Its write must then replace it, whichever began first.
  const project = 'two-writers';
  const before = pageview(project, '10:00');
  const byNewHolder = pageview(project, '10:05');
  let reading = () => {};
  const readStarted = new Promise<void>((resolve) => {
    reading = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const held = beforeQueries(warehouse, async (sql) => {
    if (!sql.includes('FROM visits FINAL')) return;
    reading();
    await released;
  });
  const newHolder = analyticsLander(held);
  const oldHolder = analyticsLander(warehouse);
  const landing = (lander: typeof newHolder, record: IngestRecord) => {
    const message = aPolledMessage(record);
    return lander.land([{ message, row: lander.prepare(message) }]);
  };
  const newHolderLanding = landing(newHolder, byNewHolder);
  await readStarted;
  await landing(oldHolder, before);
  expect(await visitIds(project)).toEqual([ids(before)]);
  release();
  await newHolderLanding;
  expect(await visitIds(project)).toEqual([ids(before, byNewHolder)]);
});
