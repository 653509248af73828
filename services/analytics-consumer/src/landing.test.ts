// Batches the warehouse cannot take as one INSERT block, through the analytics consumer on the real
// embedded log and real chDB: pageviews dated in 150 months land completely (inserts cut by partition), and
// a batch a warehouse with a lower partitions limit than ours refuses for its size (error 252, "too many
// partitions for single INSERT block") is landed in halves, with nothing set aside and nothing retried
// for ever. (Through ClickHouse's HTTP interface: test/consumer-batches.test.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsumerMetrics } from '@tally/consumer';
import type { IngestRecord } from '@tally/contract';
import { openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startAnalyticsConsumer } from './consumer.ts';

const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const dir = mkdtempSync(join(tmpdir(), 'tally-analytics-landing-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
});
afterAll(async () => {
  await warehouse.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One pageview per month from January 2010, each of its own visitor. */
const monthly = (project: string, months: number) =>
  Array.from({ length: months }, (_, i) =>
    testRecord('pageview', {
      project_id: project,
      timestamp: Date.UTC(2010, i, 15, 12),
      user_agent: BROWSER,
      data: { session_id: `s${i}`, visitor_fingerprint: `v${i}`, url: 'https://months.example/' },
    }),
  );

const count = async (table: string, project: string) =>
  (
    await warehouse.query<{ n: number }>(
      `SELECT count() AS n FROM ${table} FINAL WHERE project_id = {p:String}`,
      {
        p: project,
      },
    )
  )[0]?.n;

/** Runs the consumer on a log of its own until `records` are committed; returns the failures by kind. */
async function consume(name: string, records: IngestRecord[]): Promise<Record<string, number>> {
  const log = openEmbeddedLog({ path: join(dir, name) });
  const metrics = new ConsumerMetrics();
  await log.append(records);
  const consumer = startAnalyticsConsumer({
    log,
    warehouse,
    batch: { maxRecords: 1000, maxWaitMs: 50 },
    metrics,
  });
  try {
    await vi.waitFor(
      async () =>
        expect(
          ((await log.backlog?.()) ?? []).find((b) => b.group === 'analytics' && b.topic === 'pageview')?.lag,
        ).toBe(0),
      { timeout: 60_000, interval: 100 },
    );
    expect(await log.deadLetters.list()).toEqual([]);
  } finally {
    await consumer.stop();
    await log.close();
  }
  const failures = (await metrics.failures.get()).values;
  return Object.fromEntries(failures.map((v) => [String(v.labels.kind), v.value]));
}

it('lands a batch of pageviews dated in 150 months, and their visits, in one attempt', async () => {
  const failures = await consume('months', monthly('months', 150));
  expect(await count('events', 'months')).toBe(150);
  expect(await count('visits', 'months')).toBe(150);
  expect(failures).toEqual({});
});

it('lands in halves a batch the warehouse refuses for its partitions, setting nothing aside', async () => {
  // A server configured below our 50 partitions per insert: 20 months are refused as one block.
  await warehouse.command('SET max_partitions_per_insert_block = 4');
  try {
    const failures = await consume('strict', monthly('strict', 20));
    expect(await count('events', 'strict')).toBe(20);
    expect(await count('visits', 'strict')).toBe(20);
    expect(failures['too-large']).toBeGreaterThan(0);
    expect(Object.keys(failures)).toEqual(['too-large']);
  } finally {
    await warehouse.command('SET max_partitions_per_insert_block = 100');
  }
});
