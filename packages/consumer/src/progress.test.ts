// ConsumerProgress with the batch loop on the real embedded record log: a group with nothing waiting is
// never stalled, however long since its last batch; records waiting while no batch commits make it
// stalled, with why, in the readiness and the metrics; a commit clears it. (A consumer process fed a
// warehouse that answers 431, and npm start: test/consumer-stall.test.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedRecordLog, openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { httpAnswerError } from '@tally/warehouse';
import { afterEach, expect, it, vi } from 'vitest';
import { consumeInBatches, type Lander, type RunningBatchLoop } from './batch-loop.ts';
import { ConsumerMetrics } from './metrics.ts';
import { ConsumerProgress } from './progress.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempLog(): EmbeddedRecordLog {
  const path = mkdtempSync(join(tmpdir(), 'tally-progress-'));
  const log = openEmbeddedLog({ path });
  cleanups.push(async () => {
    await log.close();
    rmSync(path, { recursive: true, force: true });
  });
  return log;
}

function run(log: EmbeddedRecordLog, lander: Lander<string>, stallMs: number) {
  const metrics = new ConsumerMetrics();
  const progress = new ConsumerProgress({ stallMs, pollMs: 20, log });
  metrics.watch(progress);
  const loop: RunningBatchLoop = consumeInBatches({
    group: 'g',
    maxRecords: 10,
    maxWaitMs: 20,
    maxRetryDelayMs: 50,
    consumer: log.consumer({ group: 'g', topics: ['pageview'] }),
    deadLetters: log.deadLetters,
    lander,
    metrics,
    progress: progress.group('g'),
  });
  progress.start();
  cleanups.push(async () => {
    await loop.stop();
    await progress.stop();
  });
  return { metrics, progress };
}

const gauge = async (metrics: ConsumerMetrics, name: string) =>
  (await metrics.registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.group === 'g')?.value;

it('never reports a group with nothing waiting as stalled, however long since its last batch', async () => {
  const log = tempLog();
  const { metrics, progress } = run(log, { prepare: (m) => m.record.id, land: async () => {} }, 100);
  // Past the stall time, with the backlog read again since.
  await vi.waitFor(
    async () => expect(await gauge(metrics, 'tally_consumer_last_progress_seconds')).toBeGreaterThan(0.1),
    {
      timeout: 10_000,
    },
  );
  const polls = progress.polls;
  await vi.waitFor(() => expect(progress.polls).toBeGreaterThan(polls + 1), { timeout: 10_000 });
  expect(await progress.health()).toEqual({ ok: true });
  expect(await gauge(metrics, 'tally_consumer_lag_records')).toBe(0);
  expect(progress.states()).toEqual([expect.objectContaining({ group: 'g', lag: 0, stalled_since: null })]);
});

it('reports a group stalled while its batch is refused, with why, and ready again once a batch commits', async () => {
  const log = tempLog();
  let refusing = true;
  const landed: string[] = [];
  const { metrics, progress } = run(
    log,
    {
      prepare: (m) => m.record.id,
      land: async (items) => {
        // What @clickhouse/client's warehouse raises for a proxy's 431: the warehouse's failure.
        if (refusing) throw httpAnswerError(431, '');
        landed.push(...items.map((i) => i.row));
      },
    },
    300,
  );
  await log.append(Array.from({ length: 3 }, () => testRecord('pageview')));
  await vi.waitFor(async () => expect((await progress.health()).ok).toBe(false), { timeout: 10_000 });
  const { detail } = await progress.health();
  expect(detail).toMatch(/^consumer group g is stalled: 3 records waiting, no batch committed for \d+ s/);
  expect(detail).toContain(
    'last failure: warehouse failure (WarehouseError HTTP 431): the warehouse answered HTTP 431 without a ClickHouse error',
  );
  expect(await gauge(metrics, 'tally_consumer_lag_records')).toBe(3);
  expect(await gauge(metrics, 'tally_consumer_last_progress_seconds')).toBeGreaterThan(0.3);

  refusing = false;
  await vi.waitFor(async () => expect(await progress.health()).toEqual({ ok: true }), { timeout: 10_000 });
  expect(landed).toHaveLength(3);
  await vi.waitFor(async () => expect(await gauge(metrics, 'tally_consumer_lag_records')).toBe(0), {
    timeout: 10_000,
  });
  expect(progress.states()).toEqual([expect.objectContaining({ stalled_since: null, reason: null })]);
});
