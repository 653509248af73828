// One appender per embedded log directory: a second writer is refused, readers are not, and a lock left
// by a process that is gone is taken over.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { decodedOnly, testRecord } from '../conformance.ts';
import { type EmbeddedRecordLog, openEmbeddedLog } from './embedded-log.ts';
import { EmbeddedLogLockedError } from './writer-lock.ts';

const dirs: string[] = [];
const logs: EmbeddedRecordLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-lock-'));
  dirs.push(dir);
  return dir;
}
function open(path: string, writer = false) {
  const log = openEmbeddedLog({ path, writer });
  logs.push(log);
  return log;
}
async function readAll(log: EmbeddedRecordLog) {
  return decodedOnly(await log.consumer({ group: `read-${Math.random()}` }).poll({ max: 1000 })).map(
    (m) => m.record.id,
  );
}

it('refuses a second writer on the same directory, naming the holder', () => {
  const path = tempDir();
  open(path, true);
  expect(() => open(path, true)).toThrow(EmbeddedLogLockedError);
  expect(() => open(path, true)).toThrow(`being written by another process (pid ${process.pid})`);
});

it('lets readers open the log beside its writer, and refuses their appends', async () => {
  const path = tempDir();
  const writer = open(path, true);
  const record = testRecord('pageview');
  await writer.append([record]);
  const reader = open(path);
  expect(await readAll(reader)).toEqual([record.id]);
  await expect(reader.append([testRecord('pageview')])).rejects.toThrow(EmbeddedLogLockedError);
  expect(await readAll(writer)).toEqual([record.id]); // nothing overwritten
});

it('hands over on close: the next writer continues the offsets on disk, including what was written after it opened', async () => {
  const path = tempDir();
  const first = open(path, true);
  const second = open(path); // opened before the first writes: its view of the offsets is old
  const a = testRecord('event');
  await first.append([a]);
  await first.close();
  expect(existsSync(join(path, 'writer.lock'))).toBe(false);

  const b = testRecord('event');
  await second.append([b]); // takes the lock now
  const messages = decodedOnly(await second.consumer({ group: 'g', topics: ['event'] }).poll({ max: 10 }));
  expect(messages.map((m) => [m.offset, m.record.id])).toEqual([
    [0, a.id],
    [1, b.id],
  ]);
});

it('takes over a lock left by a process that is gone', async () => {
  const path = tempDir();
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  writeFileSync(join(path, 'writer.lock'), JSON.stringify({ pid: gone, started: '1' }));
  const log = open(path, true);
  await log.append([testRecord('identify')]);
  expect(await readAll(log)).toHaveLength(1);
});

it('takes over a lock whose pid now belongs to another process (started at another time)', () => {
  const path = tempDir();
  writeFileSync(join(path, 'writer.lock'), JSON.stringify({ pid: process.ppid, started: '1' }));
  expect(() => open(path, true)).not.toThrow();
});
