// A writer that reopens its environment now and then (releasePagesEveryBytes, to let the kernel drop the
// file pages mapped around its commits and read by its consumers): appends that arrive while it reopens
// wait and then commit in the order they came, every acknowledged record is there afterwards, once, at
// consecutive offsets, and retention, dead letters and replays keep working across reopens. Consumers in
// the same handle, or in another handle of the process that closes while the writer reopens (npm start's
// two arrangements), read every record once, and the pages are released.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { loadConfig } from '@tally/config';
import type { IngestRecord } from '@tally/contract';
import { afterEach, expect, it } from 'vitest';
import { decodedOnly, testRecord } from '../conformance.ts';
import { openRecordLog } from '../open.ts';
import { residentKiB } from '../testing.ts';
import { serveEnvironmentRelease, suspendThroughPort } from '../thread/release-port.ts';
import { type EmbeddedRecordLog, openEmbeddedLog } from './embedded-log.ts';

const dirs: string[] = [];
const logs: EmbeddedRecordLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-release-pages-'));
  dirs.push(dir);
  return dir;
}

/** Every pageview of the log, in offset order, as a fresh reader sees it. */
async function readAll(path: string): Promise<{ ids: string[]; offsets: number[] }> {
  const reader = openEmbeddedLog({ path });
  logs.push(reader);
  const consumer = reader.consumer({ group: 'check', topics: ['pageview'] });
  const ids: string[] = [];
  const offsets: number[] = [];
  for (;;) {
    const batch = await consumer.poll({ max: 1000, waitMs: 0 });
    if (batch.length === 0) break;
    for (const message of decodedOnly(batch)) {
      ids.push(message.record.id);
      offsets.push(message.offset);
    }
  }
  return { ids, offsets };
}

it('commits appends made while it reopens, in the order they came, every one once at consecutive offsets', async () => {
  const path = tempDir();
  const log = openEmbeddedLog({ path, writer: true, releasePagesEveryBytes: 16 * 1024 });
  logs.push(log);
  const sent: string[] = [];
  // 320 appends of 5 records, eight in flight at any time (the gateway's loops hand over batches at any
  // moment): the environment reopens every ~16 KiB, while appends started after the reopen began wait for
  // it, and appends started before it are still committing.
  const appends: Promise<void>[] = [];
  for (let i = 0; i < 320; i += 1) {
    const batch: IngestRecord[] = Array.from({ length: 5 }, () => testRecord('pageview'));
    sent.push(...batch.map((r) => r.id));
    appends.push(log.append(batch));
    if (appends.length >= 8) await appends[appends.length - 8];
  }
  await Promise.all(appends);
  expect(log.environmentReopens()).toBeGreaterThan(10);
  expect((await log.health()).ok).toBe(true);
  await log.close();
  const { ids, offsets } = await readAll(path);
  expect(ids).toEqual(sent);
  expect(offsets).toEqual(sent.map((_, i) => i));
});

it('keeps dead letters, replays and retention working across reopens', async () => {
  const path = tempDir();
  const log = openEmbeddedLog({ path, writer: true, releasePagesEveryBytes: 4 * 1024, replayIntervalMs: 10 });
  logs.push(log);
  const letter = testRecord('pageview');
  await log.deadLetters.add([
    {
      id: 'g:pageview:0:0',
      group: 'g',
      topic: 'pageview',
      partition: 0,
      offset: 0,
      error_code: 'test',
      error: 'test',
      failed_at: Date.now(),
      record: letter,
    },
  ]);
  for (let i = 0; i < 20; i += 1) await log.append([testRecord('pageview'), testRecord('pageview')]);
  expect(log.environmentReopens()).toBeGreaterThan(0);
  // A replay asked for (as the CLI beside the gateway asks) is carried out by the writer's timer.
  await log.deadLetters.replay(['g:pageview:0:0']);
  await expect.poll(async () => (await log.deadLetters.list()).length, { timeout: 5000 }).toBe(0);
  await log.close();
  const { ids } = await readAll(path);
  expect(ids).toHaveLength(41);
  expect(ids.at(-1)).toBe(letter.id);
});

it('is what openRecordLog gives a writer asked to release pages (LOG_REOPEN_BYTES), and no other', async () => {
  const dataDir = tempDir();
  const config = loadConfig({ TALLY_DATA_DIR: dataDir, LOG_REOPEN_BYTES: '4096' });
  const releasing = (await openRecordLog(config, { writer: true, releasePages: true })) as EmbeddedRecordLog;
  for (let i = 0; i < 10; i += 1) await releasing.append([testRecord('pageview'), testRecord('pageview')]);
  expect(releasing.environmentReopens()).toBeGreaterThan(0);
  await releasing.close();
  // A writer not asked to (the CLI's), and one with LOG_REOPEN_BYTES=0, never reopen.
  for (const [settings, options] of [
    [{ LOG_REOPEN_BYTES: '4096' }, { writer: true }],
    [{ LOG_REOPEN_BYTES: '0' }, { writer: true, releasePages: true }],
  ] as const) {
    const log = (await openRecordLog(
      loadConfig({ TALLY_DATA_DIR: dataDir, ...settings }),
      options,
    )) as EmbeddedRecordLog;
    for (let i = 0; i < 10; i += 1) await log.append([testRecord('pageview'), testRecord('pageview')]);
    expect(log.environmentReopens()).toBe(0);
    await log.close();
  }
});

/** A pageview of ~16 KiB (LMDB stores it in overflow pages of its own), so that a few MiB take few records. */
const bigPageview = () =>
  testRecord('pageview', { data: { url: `https://example.com/${'p'.repeat(16_000)}` } });

/**
 * Appends `batches` batches of big pageviews, eight appends in flight, while `consumer` polls and commits
 * alongside; resolves to the ids sent and the ids the consumer got, in its order.
 */
async function appendWhileConsuming(
  writer: EmbeddedRecordLog,
  consumer: ReturnType<EmbeddedRecordLog['consumer']>,
  batches: number,
): Promise<{ sent: string[]; got: string[] }> {
  const sent: string[] = [];
  const got: string[] = [];
  let appending = true;
  const consuming = (async () => {
    while (appending || got.length < sent.length) {
      const batch = await consumer.poll({ max: 50, waitMs: 20 });
      got.push(...decodedOnly(batch).map((message) => message.record.id));
      if (batch.length > 0) await consumer.commit(batch);
    }
  })();
  const appends: Promise<void>[] = [];
  for (let i = 0; i < batches; i += 1) {
    const batch = Array.from({ length: 4 }, bigPageview);
    sent.push(...batch.map((r) => r.id));
    appends.push(writer.append(batch));
    if (appends.length >= 8) await appends[appends.length - 8];
  }
  await Promise.all(appends);
  appending = false;
  await consuming;
  return { sent, got };
}

it('reopens a writer whose consumers read it in the same handle (npm start with several loops): they read every record once, in order', async () => {
  const path = tempDir();
  const log = openEmbeddedLog({ path, writer: true, releasePagesEveryBytes: 256 * 1024 });
  logs.push(log);
  const consumer = log.consumer({ group: 'g', topics: ['pageview'] });
  const { sent, got } = await appendWhileConsuming(log, consumer, 100);
  expect(log.environmentReopens()).toBeGreaterThan(10);
  expect(got).toEqual(sent);
  // Its commits went on across the reopens: a consumer of the group starts after the last record.
  expect(log.groups()).toEqual([{ group: 'g', topic: 'pageview', position: sent.length, lag: 0 }]);
  expect(await log.backlog?.()).toEqual([{ group: 'g', topic: 'pageview', lag: 0, oldest_at: null }]);
});

it("releases the file's pages with another handle on it in the process (npm start with one loop), which closes while the writer reopens", async () => {
  const path = tempDir();
  const file = join(path, 'records.mdb');
  // The writer and the consumers' handle, joined as npm start joins its gateway thread and main thread.
  const channel = new MessageChannel();
  const reader = openEmbeddedLog({ path });
  logs.push(reader);
  serveEnvironmentRelease(reader, channel.port1);
  const writer = openEmbeddedLog({
    path,
    writer: true,
    releasePagesEveryBytes: 1024 * 1024,
    sharer: suspendThroughPort(channel.port2),
  });
  logs.push(writer);
  const consumer = reader.consumer({ group: 'g', topics: ['pageview'] });
  // ~25 MiB appended and read, in 4-record batches of ~16 KiB records.
  const { sent, got } = await appendWhileConsuming(writer, consumer, 400);
  expect(got).toEqual(sent);
  expect(writer.environmentReopens()).toBeGreaterThan(10);
  expect(reader.environmentReopens()).toBe(writer.environmentReopens());
  const logKiB = statSync(file).size / 1024;
  expect(logKiB).toBeGreaterThan(24 * 1024);
  // The consumer read every page of the records through the map; what stays mapped is what the writer and
  // the consumer touched since the last reopen, a few MiB, not the log (without the sharer, ~25 MiB stay).
  expect(residentKiB(file)).toBeLessThan(logKiB / 4);
  channel.port1.close();
});

it('lets a suspended handle close, and a writer whose sharer does not answer reopen alone', async () => {
  const path = tempDir();
  const channel = new MessageChannel();
  // Nobody serves the other end: the writer waits the timeout, then reopens alone; appends go on.
  const writer = openEmbeddedLog({
    path,
    writer: true,
    releasePagesEveryBytes: 4 * 1024,
    sharer: suspendThroughPort(channel.port2, 50),
  });
  logs.push(writer);
  for (let i = 0; i < 20; i += 1) await writer.append([testRecord('pageview'), testRecord('pageview')]);
  expect(writer.environmentReopens()).toBeGreaterThan(0);
  // A handle closed while suspended stays closed, and its waiting reads end.
  const reader = openEmbeddedLog({ path });
  await reader.suspendEnvironment();
  const reading = reader.consumer({ group: 'g', topics: ['pageview'] }).poll({ max: 10 });
  await reader.close();
  expect(await reading).toEqual([]);
  channel.port1.close();
});

it("opens a suspended handle again when the writer's thread goes away without resuming it", async () => {
  const path = tempDir();
  const writer = openEmbeddedLog({ path, writer: true });
  logs.push(writer);
  await writer.append([testRecord('pageview'), testRecord('pageview')]);
  const reader = openEmbeddedLog({ path });
  logs.push(reader);
  const channel = new MessageChannel();
  serveEnvironmentRelease(reader, channel.port1);
  await suspendThroughPort(channel.port2).suspend();
  const reading = reader.consumer({ group: 'g', topics: ['pageview'] }).poll({ max: 10, waitMs: 5000 });
  // The port's other end closes, as it does when the thread ends: the reader opens again and reads.
  channel.port2.close();
  expect(await reading).toHaveLength(2);
  expect(reader.environmentReopens()).toBe(1);
});
