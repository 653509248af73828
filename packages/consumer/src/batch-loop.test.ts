// consumeInBatches on the real embedded record log: batches bounded by size (and by time, so a partial
// batch lands without waiting for more), offsets committed only after landing, outages and warehouse
// faults retried with the same batch, and records at fault found and set aside while the others land.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type DeadLetter,
  type EmbeddedRecordLog,
  type LogConsumer,
  LogUnavailableError,
  openEmbeddedLog,
  type PolledMessage,
} from '@tally/log';
import { decodedOnly } from '@tally/log/conformance';
import { aPolledMessage, aRecord } from '@tally/log/testing';
import { engineError, WarehouseError, WarehouseUnavailableError } from '@tally/warehouse';
import { afterEach, expect, it, vi } from 'vitest';
import { batchDeadline, consumeInBatches, type Lander, type Prepared } from './batch-loop.ts';
import { RecordError } from './failures.ts';
import { ConsumerMetrics } from './metrics.ts';

/** A record of this file's project. */
const testRecord = (type: 'pageview' | 'event' | 'revenue') => aRecord(type, { project_id: 'landing' });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function tempLog(): EmbeddedRecordLog {
  const path = mkdtempSync(join(tmpdir(), 'tally-landing-'));
  const log = openEmbeddedLog({ path });
  cleanups.push(async () => {
    await log.close();
    rmSync(path, { recursive: true, force: true });
  });
  return log;
}

/** A lander that records what it lands; `land` may be replaced per test. */
function recordingLander(
  land?: (items: readonly Prepared<string>[]) => Promise<void>,
): Lander<string> & { landed: string[][] } {
  const landed: string[][] = [];
  return {
    landed,
    prepare: (m) => m.record.id,
    land:
      land ??
      (async (items) => {
        landed.push(items.map((i) => i.row));
      }),
  };
}

const options = { group: 'g', maxRecords: 10, maxWaitMs: 20, maxRetryDelayMs: 20 };

it('lands batches of at most maxRecords and commits them', async () => {
  const log = tempLog();
  await log.append(Array.from({ length: 25 }, () => testRecord('pageview')));
  const lander = recordingLander();
  const loop = consumeInBatches({
    ...options,
    maxWaitMs: 50,
    consumer: log.consumer({ group: 'g' }),
    deadLetters: log.deadLetters,
    lander,
  });
  await vi.waitFor(() => expect(lander.landed.flat()).toHaveLength(25), { timeout: 10_000 });
  await loop.stop();
  expect(lander.landed.map((b) => b.length)).toEqual([10, 10, 5]);
  expect(await log.consumer({ group: 'g' }).poll({ max: 100 })).toEqual([]);
  expect(await log.deadLetters.list()).toEqual([]);
});

it('retries an outage with the same batch for as long as it lasts, then commits, setting nothing aside', async () => {
  const log = tempLog();
  await log.append([testRecord('revenue'), testRecord('revenue')]);
  const attempts: string[][] = [];
  const metrics = new ConsumerMetrics();
  const lander = recordingLander(async (items) => {
    attempts.push(items.map((i) => i.row));
    if (attempts.length < 4) throw new WarehouseUnavailableError('connection refused');
    lander.landed.push(items.map((i) => i.row));
  });
  const loop = consumeInBatches({
    ...options,
    consumer: log.consumer({ group: 'g', topics: ['revenue'] }),
    deadLetters: log.deadLetters,
    lander,
    metrics,
  });
  await vi.waitFor(() => expect(lander.landed.flat()).toHaveLength(2), { timeout: 10_000 });
  await loop.stop();
  expect(attempts).toHaveLength(4);
  expect(new Set(attempts.map((a) => a.join()))).toEqual(new Set([attempts[0]?.join()]));
  expect(await log.consumer({ group: 'g', topics: ['revenue'] }).poll({ max: 10 })).toEqual([]);
  expect(await log.deadLetters.list()).toEqual([]);
  expect(await metrics.registry.getSingleMetricAsString('tally_consumer_failures_total')).toContain(
    'tally_consumer_failures_total{group="g",kind="outage"} 3',
  );
});

it('retries a failure of the warehouse itself (not of the records) without setting anything aside; stop leaves the batch uncommitted', async () => {
  const log = tempLog();
  const records = [testRecord('event'), testRecord('event')];
  await log.append(records);
  let attempts = 0;
  const errors: object[] = [];
  const loop = consumeInBatches({
    ...options,
    consumer: log.consumer({ group: 'g' }),
    deadLetters: log.deadLetters,
    lander: recordingLander(async () => {
      attempts++;
      throw new WarehouseError('ClickHouse error 60 (UNKNOWN_TABLE)', { code: 60 });
    }),
    logger: { info() {}, warn() {}, error: (object) => errors.push(object) },
  });
  await vi.waitFor(() => expect(attempts).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
  await loop.stop();
  await expect(loop.done).resolves.toBeUndefined(); // it never failed
  expect(errors[0]).toMatchObject({ group: 'g', code: 60, kind: 'warehouse' });
  expect(await log.deadLetters.list()).toEqual([]);
  const again = decodedOnly(await log.consumer({ group: 'g' }).poll({ max: 10 }));
  expect(again.map((m) => m.record.id)).toEqual(records.map((r) => r.id));
});

it('sets aside at once a record that cannot be prepared, and lands the others', async () => {
  const log = tempLog();
  const records = Array.from({ length: 5 }, () => testRecord('pageview'));
  await log.append(records);
  const bad = records[2]?.id;
  const lander = recordingLander();
  lander.prepare = (m) => {
    if (m.record.id === bad) throw new RecordError('contract', 'data.timestamp must be …');
    return m.record.id;
  };
  const loop = consumeInBatches({
    ...options,
    consumer: log.consumer({ group: 'g' }),
    deadLetters: log.deadLetters,
    lander,
  });
  await vi.waitFor(() => expect(lander.landed.flat()).toHaveLength(4), { timeout: 10_000 });
  await loop.stop();
  const letters = await log.deadLetters.list();
  expect(letters).toEqual([
    expect.objectContaining({
      id: `g:pageview:0:2`,
      group: 'g',
      topic: 'pageview',
      offset: 2,
      error_code: 'contract',
      error: 'data.timestamp must be …',
      record: records[2],
    }),
  ]);
  expect(await log.consumer({ group: 'g' }).poll({ max: 10 })).toEqual([]);
});

it('splits a batch the warehouse refuses for its values until the rows at fault are found; the others land', async () => {
  const log = tempLog();
  const records = Array.from({ length: 20 }, () => testRecord('pageview'));
  await log.append(records);
  const bad = new Set([records[3]?.id, records[4]?.id, records[17]?.id]);
  const attempts: number[] = [];
  const warnings: object[] = [];
  const metrics = new ConsumerMetrics();
  const lander = recordingLander(async (items) => {
    attempts.push(items.length);
    if (items.some((i) => bad.has(i.row))) {
      throw new WarehouseError('ClickHouse error 27 (CANNOT_PARSE_INPUT_ASSERTION_FAILED)', {
        code: 27,
        detail: 'Code: 27. Cannot parse input: … the row quoted here …',
      });
    }
    lander.landed.push(items.map((i) => i.row));
  });
  const loop = consumeInBatches({
    ...options,
    maxRecords: 20,
    maxWaitMs: 100,
    consumer: log.consumer({ group: 'g' }),
    deadLetters: log.deadLetters,
    lander,
    metrics,
    logger: { info() {}, warn: (object) => warnings.push(object), error() {} },
  });
  await vi.waitFor(async () => expect(await log.deadLetters.list()).toHaveLength(3), { timeout: 10_000 });
  await loop.stop();
  expect(lander.landed.flat().sort()).toEqual(
    records
      .map((r) => r.id)
      .filter((id) => !bad.has(id))
      .sort(),
  );
  const letters = await log.deadLetters.list();
  expect(letters.map((l) => l.record?.id).sort()).toEqual([...bad].sort());
  expect(
    letters.every((l) => l.error_code === 'warehouse-27' && l.error.includes('the row quoted here')),
  ).toBe(true);
  // Fewer attempts than one per record: halves, not every record alone.
  expect(attempts.length).toBeLessThan(records.length);
  // The log lines say where, never what.
  expect(warnings).toEqual(
    letters.map((l) =>
      expect.objectContaining({ dead_letter: l.id, code: 'warehouse-27', group: 'g', type: 'pageview' }),
    ),
  );
  expect(JSON.stringify(warnings)).not.toContain('quoted');
  expect(await metrics.registry.getSingleMetricAsString('tally_dead_letters_total')).toContain(
    'tally_dead_letters_total{group="g",type="pageview",code="warehouse-27"} 3',
  );
  expect(await log.consumer({ group: 'g' }).poll({ max: 10 })).toEqual([]);
});

it('never sets aside a record the warehouse refuses for its size alone: halves, then retries one record as its failure', async () => {
  const log = tempLog();
  const records = Array.from({ length: 4 }, () => testRecord('pageview'));
  await log.append(records);
  // The engine's own words: each statement of more than one record spans too many partitions.
  const tooLarge = () =>
    engineError(
      'Code: 252. DB::Exception: Too many partitions for single INSERT block (more than 1). The limit is ' +
        "controlled by 'max_partitions_per_insert_block' setting. (TOO_MANY_PARTS)",
      252,
    );
  const attempts: number[] = [];
  const errors: object[] = [];
  const lander = recordingLander(async (items) => {
    attempts.push(items.length);
    if (items.length > 1 || attempts.filter((n) => n === 1).length <= 2) throw tooLarge();
    lander.landed.push(items.map((i) => i.row));
  });
  const metrics = new ConsumerMetrics();
  const loop = consumeInBatches({
    ...options,
    consumer: log.consumer({ group: 'g' }),
    deadLetters: log.deadLetters,
    lander,
    metrics,
    logger: { info() {}, warn() {}, error: (object) => errors.push(object) },
  });
  await vi.waitFor(() => expect(lander.landed.flat()).toHaveLength(4), { timeout: 10_000 });
  await loop.stop();
  expect(attempts.slice(0, 3)).toEqual([4, 2, 1]);
  // The first single record refused was retried (twice) as the warehouse's failure, then landed.
  expect(errors).toEqual([
    expect.objectContaining({ kind: 'too-large', code: 252, records: 1 }),
    expect.objectContaining({ kind: 'too-large', code: 252, records: 1 }),
  ]);
  expect(JSON.stringify(errors)).not.toContain('partitions');
  expect(await log.deadLetters.list()).toEqual([]);
  expect(await log.consumer({ group: 'g' }).poll({ max: 10 })).toEqual([]);
});

it('sets aside a message the log could not decode, with its bytes', async () => {
  const log = tempLog();
  const good = aPolledMessage(testRecord('event'), { offset: 1 });
  const undecodable: PolledMessage = {
    topic: 'event',
    partition: 0,
    offset: 0,
    record: null,
    raw: new Uint8Array([1, 2, 3]),
    error: 'Message encoded with magic byte 1, expected 0',
  };
  let delivered = false;
  const committed: number[] = [];
  const consumer: LogConsumer = {
    poll: async ({ waitMs = 0 } = {}) => {
      if (delivered) {
        await new Promise((resolve) => setTimeout(resolve, waitMs)); // as a log does: wait for records
        return [];
      }
      delivered = true;
      return [undecodable, good];
    },
    commit: async (positions) => void committed.push(...positions.map((p) => p.offset)),
    assertHeld: () => {},
    holding: () => 0,
    close: async () => {},
  };
  const lander = recordingLander();
  const loop = consumeInBatches({ ...options, consumer, deadLetters: log.deadLetters, lander });
  await vi.waitFor(() => expect(committed).toEqual([0, 1]), { timeout: 10_000 });
  await loop.stop();
  expect(lander.landed).toEqual([[good.record.id]]);
  expect(await log.deadLetters.list()).toEqual([
    expect.objectContaining({
      id: 'g:event:0:0',
      error_code: 'undecodable',
      record: null,
    }),
  ]);
  expect([...((await log.deadLetters.get('g:event:0:0'))?.raw ?? [])]).toEqual([1, 2, 3]);
});

it('commits only once the dead letters are durable, retrying while the store is unavailable', async () => {
  const log = tempLog();
  await log.append([testRecord('pageview')]);
  let failures = 2;
  const added: DeadLetter[] = [];
  const deadLetters = {
    ...log.deadLetters,
    add: async (letters: readonly DeadLetter[]) => {
      if (failures-- > 0) throw new WarehouseUnavailableError('store down');
      added.push(...letters);
    },
  };
  const lander = recordingLander();
  lander.prepare = () => {
    throw new RecordError('contract', 'bad');
  };
  const loop = consumeInBatches({ ...options, consumer: log.consumer({ group: 'g' }), deadLetters, lander });
  await vi.waitFor(() => expect(added).toHaveLength(1), { timeout: 10_000 });
  await loop.stop();
  expect(failures).toBe(-1);
  expect(await log.consumer({ group: 'g' }).poll({ max: 10 })).toEqual([]);
});

it('retries a commit the log refuses for now (a full disk), then commits; another failure ends the loop', async () => {
  const log = tempLog();
  await log.append([testRecord('pageview')]);
  const inner = log.consumer({ group: 'g' });
  let refusals = 2;
  const consumer: LogConsumer = {
    poll: (o) => inner.poll(o),
    commit: async (positions) => {
      if (refusals-- > 0) throw new LogUnavailableError("no space left on the record log's disk");
      await inner.commit(positions);
    },
    assertHeld: () => {},
    holding: () => 0,
    close: () => inner.close(),
  };
  const lander = recordingLander();
  const loop = consumeInBatches({ ...options, consumer, deadLetters: log.deadLetters, lander });
  await vi.waitFor(async () => expect(await log.consumer({ group: 'g' }).poll({ max: 10 })).toEqual([]), {
    timeout: 10_000,
  });
  await loop.stop();
  expect(refusals).toBe(-1);
  expect(lander.landed).toHaveLength(1); // landed once, committed on the third attempt

  await log.append([testRecord('pageview')]);
  const broken: LogConsumer = { ...consumer, commit: () => Promise.reject(new Error('not retryable')) };
  const ended = consumeInBatches({ ...options, consumer: broken, deadLetters: log.deadLetters, lander });
  await expect(ended.done).rejects.toThrow('not retryable');
});

it('counts a batch’s wait from when its first record arrived, not from when it was polled', async () => {
  const log = tempLog();
  // Records that arrived a minute ago (they waited behind a slow batch): their wait is used up.
  const minuteAgo = Date.now() - 60_000;
  await log.append(
    Array.from({ length: 3 }, () => aRecord('pageview', { project_id: 'landing', received_at: minuteAgo })),
  );
  const lander = recordingLander();
  const loop = consumeInBatches({
    ...options,
    maxWaitMs: 60_000,
    consumer: log.consumer({ group: 'g' }),
    deadLetters: log.deadLetters,
    lander,
  });
  // Landed at once, not a minute after the poll.
  await vi.waitFor(() => expect(lander.landed).toEqual([expect.any(Array)]), { timeout: 10_000 });
  expect(lander.landed[0]).toHaveLength(3);
  await loop.stop();
});

it('sets a batch’s deadline from its first record’s arrival, within maxWaitMs from now', () => {
  const now = 1_000_000;
  const arrived = (at: number) => aPolledMessage(aRecord('pageview', { received_at: at }));
  expect(batchDeadline(arrived(now - 300), 1000, now)).toBe(now + 700);
  expect(batchDeadline(arrived(now - 5000), 1000, now)).toBe(now); // waited longer than maxWaitMs already
  expect(batchDeadline(arrived(now + 5000), 1000, now)).toBe(now + 1000); // a clock ahead of this one
});
