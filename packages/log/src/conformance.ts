// The conformance suite every record-log backend runs (embedded: packages/log/src/embedded; Kafka:
// test/kafka-log.test.ts): the same behaviour behind the same interface, the dead-letter store included.
// Each backend's test calls describeRecordLogConformance with a factory.
import type { RecordType } from '@tally/contract';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DeadLetter,
  deadLetterId,
  type LogConsumer,
  type LogMessage,
  LogUnavailableError,
  type PolledMessage,
  type RecordLog,
} from './record-log.ts';
import { anIngestRecord, aRecord, type RecordOverrides } from './testing.ts';

/** The messages of a poll, which in these tests must all be decodable records. */
export function decodedOnly(messages: readonly PolledMessage[]): LogMessage[] {
  return messages.map((m) => {
    if (m.record === null) throw new Error(`undecodable message at ${m.topic}:${m.partition}:${m.offset}`);
    return m;
  });
}

export interface LogFixture {
  log: RecordLog;
  /** Closes the log and opens the same storage again (as after a restart). */
  reopen(): Promise<RecordLog>;
}

/**
 * A record of `type` as the gateway appends it, with `overrides` (the builders of ./testing); `data`, when
 * given, is the whole payload.
 */
export const testRecord = <T extends RecordType>(type: T, overrides: RecordOverrides<T> = {}) =>
  overrides.data ? anIngestRecord(type, overrides) : aRecord(type, overrides);

/** Polls until `count` messages came (or fails after 10 s). */
async function pollUntil(consumer: LogConsumer, count: number): Promise<LogMessage[]> {
  const seen: LogMessage[] = [];
  const deadline = Date.now() + 10_000;
  while (seen.length < count && Date.now() < deadline) {
    seen.push(...decodedOnly(await consumer.poll({ max: count - seen.length, waitMs: 200 })));
  }
  expect(seen).toHaveLength(count);
  return seen;
}

async function drain(log: RecordLog, group: string, expected: number, commit = true): Promise<LogMessage[]> {
  const consumer = log.consumer({ group });
  const seen: LogMessage[] = [];
  const deadline = Date.now() + 10_000;
  while (seen.length < expected && Date.now() < deadline) {
    const batch = decodedOnly(await consumer.poll({ max: 100, waitMs: 200 }));
    seen.push(...batch);
    if (commit && batch.length) await consumer.commit(batch);
  }
  await consumer.close();
  return seen;
}

export function describeRecordLogConformance(name: string, open: () => Promise<LogFixture>): void {
  describe(`record log conformance: ${name}`, () => {
    let current: RecordLog | undefined;
    const fixture = async () => {
      const f = await open();
      current = f.log;
      return {
        ...f,
        reopen: async () => {
          current = await f.reopen();
          return current;
        },
      };
    };
    afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    it('reads back appended records of every type, field for field, in order per topic', async () => {
      const { log } = await fixture();
      // One of each browser type with a region and a city, as the gateway's location lookup adds them.
      const placed = { country: 'GB', region: 'England', city: 'London' };
      const records = (['pageview', 'event', 'identify', 'revenue'] as const).flatMap((t) =>
        [0, 1, 2].map((i) => testRecord(t, i === 1 && t !== 'revenue' ? placed : {})),
      );
      await log.append(records);
      const seen = await drain(log, 'g', records.length);
      expect(seen).toHaveLength(records.length);
      for (const type of ['pageview', 'event', 'identify', 'revenue'] as const) {
        const got = seen.filter((m) => m.topic === type);
        expect(got.map((m) => m.record)).toEqual(records.filter((r) => r.type === type));
        const offsets = got.map((m) => m.offset);
        expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
      }
    });

    it('keeps every record of many concurrent appends', async () => {
      const { log } = await fixture();
      const records = Array.from({ length: 300 }, (_, i) => testRecord(i % 2 ? 'event' : 'pageview'));
      await Promise.all(records.map((r) => log.append([r])));
      const seen = await drain(log, 'g', records.length);
      expect(new Set(seen.map((m) => m.record.id))).toEqual(new Set(records.map((r) => r.id)));
    });

    it('resumes a group after its last commit and redelivers what was not committed', async () => {
      const { log } = await fixture();
      const records = Array.from({ length: 10 }, () => testRecord('pageview'));
      await log.append(records);
      const first = log.consumer({ group: 'g', topics: ['pageview'] });
      const batch = decodedOnly(await first.poll({ max: 4, waitMs: 1000 }));
      expect(batch.map((m) => m.record.id)).toEqual(records.slice(0, 4).map((r) => r.id));
      await first.commit(batch);
      const uncommitted = decodedOnly(await first.poll({ max: 3, waitMs: 1000 }));
      expect(uncommitted.map((m) => m.record.id)).toEqual(records.slice(4, 7).map((r) => r.id));
      await first.close();

      const second = log.consumer({ group: 'g', topics: ['pageview'] });
      const rest = decodedOnly(await second.poll({ max: 100, waitMs: 1000 }));
      expect(rest.map((m) => m.record.id)).toEqual(records.slice(4).map((r) => r.id));
      await second.close();
    });

    it("tells each group's backlog: lag and when its oldest uncommitted record came, none once committed", async () => {
      const { log } = await fixture();
      if (!log.backlog) throw new Error('this backend has no backlog()');
      const first = Array.from({ length: 2 }, () => testRecord('event'));
      await log.append(first);
      const consumer = log.consumer({ group: 'behind', topics: ['event'] });
      const head = await pollUntil(consumer, first.length);
      await consumer.commit(head);
      const before = Date.now();
      const rest = Array.from({ length: 3 }, () => testRecord('event', { received_at: before }));
      await log.append(rest);
      const after = Date.now();
      const behind = (await log.backlog()).find((b) => b.group === 'behind' && b.topic === 'event');
      expect(behind?.lag).toBe(3);
      // Kafka tells the message's timestamp to the second; the embedded log the record's received_at.
      expect(behind?.oldest_at).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(behind?.oldest_at).toBeLessThanOrEqual(after);
      // The lag alone, as consumers poll it for their readiness.
      const lagOnly = (await log.backlog({ oldest: false })).find(
        (b) => b.group === 'behind' && b.topic === 'event',
      );
      expect(lagOnly).toEqual({ group: 'behind', topic: 'event', lag: 3, oldest_at: null });
      await consumer.commit(await pollUntil(consumer, rest.length));
      await consumer.close();
      const caughtUp = (await log.backlog()).find((b) => b.group === 'behind' && b.topic === 'event');
      expect(caughtUp).toEqual({ group: 'behind', topic: 'event', lag: 0, oldest_at: null });
      expect((await log.backlog()).some((b) => b.group === 'behind' && b.topic !== 'event')).toBe(false);
    });

    it('keeps groups independent', async () => {
      const { log } = await fixture();
      await log.append([testRecord('identify'), testRecord('identify')]);
      expect(await drain(log, 'a', 2)).toHaveLength(2);
      expect(await drain(log, 'b', 2)).toHaveLength(2);
      const again = log.consumer({ group: 'a' });
      expect(await again.poll({ waitMs: 100 })).toEqual([]);
      await again.close();
    });

    it('wakes a waiting poll when records are appended', async () => {
      const { log } = await fixture();
      const consumer = log.consumer({ group: 'g' });
      const polled = consumer.poll({ waitMs: 10_000 });
      const record = testRecord('event');
      await log.append([record]);
      expect(decodedOnly(await polled).map((m) => m.record.id)).toEqual([record.id]);
      await consumer.close();
    });

    it('keeps records and commits across a reopen', async () => {
      const f = await fixture();
      const records = Array.from({ length: 5 }, () => testRecord('revenue'));
      await f.log.append(records.slice(0, 3));
      expect(await drain(f.log, 'g', 3)).toHaveLength(3);
      await f.log.append(records.slice(3));
      const log = await f.reopen();
      const rest = await drain(log, 'g', 2);
      expect(rest.map((m) => m.record.id)).toEqual(records.slice(3).map((r) => r.id));
      await log.append([testRecord('revenue')]);
      const all = await drain(log, 'fresh', 6);
      expect(all).toHaveLength(6);
      expect(new Set(all.map((m) => m.offset)).size).toBe(6);
    });

    it('sets records aside as dead letters, lists, shows, discards and replays them', async () => {
      const { log } = await fixture();
      const bad = testRecord('revenue');
      const other = testRecord('pageview');
      await log.append([bad, other]);
      const seen = await drain(log, 'dl', 2);
      const letterOf = (message: LogMessage, code: string): DeadLetter => ({
        id: deadLetterId('dl', message),
        group: 'dl',
        topic: message.topic,
        partition: message.partition,
        offset: message.offset,
        failed_at: Date.now(),
        error: `refused: ${code}`,
        error_code: code,
        record: message.record,
      });
      const [badMessage, otherMessage] = [bad, other].map((r) => seen.find((m) => m.record.id === r.id));
      if (!badMessage || !otherMessage) throw new Error('appended records not read back');
      const letters = [letterOf(badMessage, 'warehouse-27'), letterOf(otherMessage, 'contract')];
      await log.deadLetters.add(letters);
      await log.deadLetters.add([letters[0] as DeadLetter]); // the same letter again: still one

      const listed = await log.deadLetters.list();
      expect(listed.map((l) => l.id).sort()).toEqual(letters.map((l) => l.id).sort());
      expect(await log.deadLetters.get(letters[0]?.id as string)).toEqual(letters[0]);
      expect(await log.deadLetters.get('dl:pageview:0:999999')).toBeNull();

      expect(await log.deadLetters.discard([letters[1]?.id as string, 'dl:nope:0:0'])).toBe(1);
      const result = await log.deadLetters.replay([letters[0]?.id as string, 'dl:nope:0:0']);
      expect(result.replayed.concat(result.requested)).toEqual([letters[0]?.id]);
      expect(result.refused).toEqual([{ id: 'dl:nope:0:0', reason: 'no such dead letter' }]);
      expect(await log.deadLetters.list()).toEqual([]);
      // The group reads the replayed record again, after what it had committed.
      const again = await drain(log, 'dl', 1);
      expect(again.map((m) => m.record)).toEqual([bad]);
      expect(again[0]?.offset).toBeGreaterThan(badMessage.offset);
    });

    it('refuses appends once closed with LogUnavailableError (the gateway answers 503)', async () => {
      const { log } = await fixture();
      await log.close();
      await expect(log.append([testRecord('pageview')])).rejects.toBeInstanceOf(LogUnavailableError);
      expect(await log.health()).toMatchObject({ ok: false });
    });

    it('reports health', async () => {
      const { log } = await fixture();
      expect(await log.health()).toEqual({ ok: true });
    });
  });
}
