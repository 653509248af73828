// An append-only writer that reopens its environment now and then (releasePagesEveryBytes, to let the kernel
// drop the file pages mapped around its commits): appends that arrive while it reopens wait and then commit
// in the order they came, every acknowledged record is there afterwards, once, at consecutive offsets, and
// retention, dead letters and replays keep working across reopens.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import type { IngestRecord } from '@tally/contract';
import { afterEach, expect, it } from 'vitest';
import { decodedOnly, testRecord } from '../conformance.ts';
import { openRecordLog } from '../open.ts';
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

it('is what openRecordLog gives an append-only writer (LOG_REOPEN_BYTES), and no other', async () => {
  const dataDir = tempDir();
  const config = loadConfig({ TALLY_DATA_DIR: dataDir, LOG_REOPEN_BYTES: '4096' });
  const appendOnly = (await openRecordLog(config, { writer: true, appendOnly: true })) as EmbeddedRecordLog;
  for (let i = 0; i < 10; i += 1) await appendOnly.append([testRecord('pageview'), testRecord('pageview')]);
  expect(appendOnly.environmentReopens()).toBeGreaterThan(0);
  await appendOnly.close();
  // npm start's log (its consumers read it) never reopens; nor does one with LOG_REOPEN_BYTES=0.
  for (const [settings, options] of [
    [{ LOG_REOPEN_BYTES: '4096' }, { writer: true }],
    [{ LOG_REOPEN_BYTES: '0' }, { writer: true, appendOnly: true }],
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
