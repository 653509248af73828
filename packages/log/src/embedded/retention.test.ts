// Retention of the embedded log: a record goes only once it is old enough and every group reading its
// topic has committed past it; the newest record of a topic stays, so offsets never restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordType } from '@tally/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { decodedOnly, testRecord } from '../conformance.ts';
import type { LogMessage } from '../index.ts';
import { type EmbeddedRecordLog, openEmbeddedLog } from './embedded-log.ts';

const HOUR = 3_600_000;
const dirs: string[] = [];
const logs: EmbeddedRecordLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(
  path = mkdtempSync(join(tmpdir(), 'tally-retention-')),
  options: { retentionMs?: number } = { retentionMs: HOUR },
) {
  if (!dirs.includes(path)) dirs.push(path);
  const log = openEmbeddedLog({ path, ...options });
  logs.push(log);
  return { log, path };
}

/** Appends `count` records of `type` received at `receivedAt`; returns their ids in order. */
async function append(log: EmbeddedRecordLog, type: RecordType, count: number, receivedAt: number) {
  const records = Array.from({ length: count }, () => testRecord(type, { received_at: receivedAt }));
  await log.append(records);
  return records.map((r) => r.id);
}

/** Reads, as `group`, up to `max` records of `topics` and commits them. */
async function consume(log: EmbeddedRecordLog, group: string, topics: RecordType[], max: number) {
  const consumer = log.consumer({ group, topics });
  const seen: LogMessage[] = [];
  while (seen.length < max) {
    const batch = decodedOnly(await consumer.poll({ max: max - seen.length, waitMs: 0 }));
    if (batch.length === 0) break;
    seen.push(...batch);
  }
  await consumer.commit(seen);
  return seen;
}

/** What a group that has never read gets: everything the log still holds, per topic. */
async function retained(log: EmbeddedRecordLog, topics: RecordType[]) {
  const consumer = log.consumer({ group: `fresh-${Math.random()}`, topics });
  const ids: string[] = [];
  for (;;) {
    const batch = decodedOnly(await consumer.poll({ max: 1000, waitMs: 0 }));
    if (batch.length === 0) return ids;
    ids.push(...batch.map((m) => m.record.id));
  }
}

describe('embedded log retention', () => {
  const now = Date.now();
  const old = now - 2 * HOUR;

  it('deletes old records once every group of their topic has committed past them, and only those', async () => {
    const { log } = open();
    const ids = await append(log, 'pageview', 10, old);
    const recent = await append(log, 'pageview', 2, now);

    // Nothing committed yet: a topic nobody has read keeps everything.
    expect(await log.prune(now)).toBe(0);

    // Group a is past 6 records, group b past 3: only the first 3 may go.
    await consume(log, 'a', ['pageview'], 6);
    await consume(log, 'b', ['pageview'], 3);
    expect(await log.prune(now)).toBe(3);
    expect(await retained(log, ['pageview'])).toEqual([...ids.slice(3), ...recent]);

    // Both groups read everything: the old records go; the recent ones stay (younger than retention).
    await consume(log, 'a', ['pageview'], 100);
    await consume(log, 'b', ['pageview'], 100);
    expect(await log.prune(now)).toBe(7);
    expect(await retained(log, ['pageview'])).toEqual(recent);

    // Later, once they are old too, all but the newest record of the topic go.
    expect(await log.prune(now + 2 * HOUR)).toBe(1);
    expect(await retained(log, ['pageview'])).toEqual(recent.slice(1));
  });

  it('decides per topic, by the groups that read that topic', async () => {
    const { log } = open();
    await append(log, 'pageview', 5, old);
    const revenue = await append(log, 'revenue', 5, old);
    await consume(log, 'analytics', ['pageview'], 100);

    expect(await log.prune(now)).toBe(4); // pageviews but the newest; revenue has no group yet
    expect(await retained(log, ['revenue'])).toEqual(revenue);
    expect(await retained(log, ['pageview'])).toHaveLength(1);
  });

  it('continues offsets after a restart, so committed groups read what comes next', async () => {
    const { log, path } = open();
    await append(log, 'event', 50, old);
    const first = await consume(log, 'analytics', ['event'], 100);
    expect(await log.prune(now)).toBe(49);
    await log.close();

    const { log: reopened } = open(path);
    const [next] = await append(reopened, 'event', 1, now);
    const after = await consume(reopened, 'analytics', ['event'], 100);
    expect(after.map((m) => m.record.id)).toEqual([next]);
    expect(after[0]?.offset).toBe((first.at(-1)?.offset ?? -1) + 1);
  });

  it('deletes more than one write chunk in a pass', async () => {
    const { log } = open();
    for (let i = 0; i < 5; i++) await append(log, 'pageview', 1000, old);
    await consume(log, 'analytics', ['pageview'], 10_000);
    expect(await log.prune(now)).toBe(4999);
    expect(await retained(log, ['pageview'])).toHaveLength(1);
  });

  it('keeps everything when no retention is set', async () => {
    const { log } = open(undefined, {});
    await append(log, 'identify', 3, old);
    await consume(log, 'analytics', ['identify'], 100);
    expect(await log.prune(now + 1000 * HOUR)).toBe(0);
    expect(await retained(log, ['identify'])).toHaveLength(3);
  });

  it('lists groups with their positions and lag, and forgets a group so that retention stops waiting for it', async () => {
    const { log } = open();
    await append(log, 'pageview', 10, old);
    await consume(log, 'analytics', ['pageview'], 10);
    await consume(log, 'abandoned', ['pageview'], 2);
    expect(log.groups()).toEqual([
      { group: 'abandoned', topic: 'pageview', position: 2, lag: 8 },
      { group: 'analytics', topic: 'pageview', position: 10, lag: 0 },
    ]);
    expect(await log.prune(now)).toBe(2); // held back by the abandoned group

    expect(await log.forgetGroup('abandoned')).toBe(1);
    expect(await log.forgetGroup('abandoned')).toBe(0);
    expect(log.groups().map((g) => g.group)).toEqual(['analytics']);
    expect(await log.prune(now)).toBe(7); // all but the newest
  });

  it('runs by itself every pruneIntervalMs', async () => {
    const path = mkdtempSync(join(tmpdir(), 'tally-retention-'));
    dirs.push(path);
    const log = openEmbeddedLog({ path, retentionMs: 0, pruneIntervalMs: 50 });
    logs.push(log);
    await append(log, 'pageview', 20, old);
    await consume(log, 'analytics', ['pageview'], 100);
    await expect.poll(() => retained(log, ['pageview']), { timeout: 5000 }).toHaveLength(1);
  });
});
