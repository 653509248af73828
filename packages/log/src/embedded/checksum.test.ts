// Records carry a checksum in the embedded log (record-encoding.ts). On a real LMDB file: a byte flipped
// on disk inside a stored record makes that record an UndecodableMessage with the stored bytes, never a
// record with altered values, and the records around it read back unchanged; records written before the
// checksum existed (lmdb-js's own MessagePack of the record) still read back, beside new ones.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestRecord } from '@tally/contract';
import { open } from 'lmdb';
import { afterEach, expect, it } from 'vitest';
import { decodedOnly, testRecord } from '../conformance.ts';
import type { PolledMessage } from '../record-log.ts';
import { openEmbeddedLog } from './embedded-log.ts';
import { FRAME_MARKER } from './record-encoding.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-checksum-'));
  dirs.push(dir);
  return dir;
}

/**
 * Flips one bit of the byte `at` characters into every copy of `marker` in the file (LMDB copies pages on
 * write, so a file may hold stale copies of a record beside the live one); returns how many it changed.
 */
export function damageOnDisk(file: string, marker: string, at = 3): number {
  const bytes = readFileSync(file);
  const needle = Buffer.from(marker);
  let found = 0;
  for (let i = bytes.indexOf(needle); i !== -1; i = bytes.indexOf(needle, i + 1)) {
    bytes[i + at] = (bytes[i + at] as number) ^ 0x01;
    found++;
  }
  writeFileSync(file, bytes);
  return found;
}

function pageview(marker: string): IngestRecord {
  return testRecord('pageview', {
    project_id: 'checksum',
    data: { session_id: 's1', visitor_fingerprint: 'v1', url: `https://example.com/${marker}` },
  });
}

async function pollAll(path: string): Promise<PolledMessage[]> {
  const log = openEmbeddedLog({ path });
  try {
    return await log.consumer({ group: `read-${randomUUID()}`, topics: ['pageview'] }).poll({ max: 100 });
  } finally {
    await log.close();
  }
}

it('reads a record whose bytes were damaged on disk as undecodable, with its bytes; its neighbours unchanged', async () => {
  const path = join(tempDir(), 'log');
  const marker = `damaged-${randomUUID()}`;
  const records = [pageview(`before-${randomUUID()}`), pageview(marker), pageview(`after-${randomUUID()}`)];
  const writer = openEmbeddedLog({ path, writer: true });
  await writer.append(records);
  await writer.close();

  expect(damageOnDisk(join(path, 'records.mdb'), marker)).toBeGreaterThan(0);

  const messages = await pollAll(path);
  expect(messages.map((m) => m.offset)).toEqual([0, 1, 2]);
  const [before, damaged, after] = messages;
  expect(before?.record).toEqual(records[0]);
  expect(after?.record).toEqual(records[2]);
  expect(damaged?.record).toBeNull();
  if (damaged?.record !== null) throw new Error('the damaged record was read as a record');
  expect(damaged.error).toMatch(/checksum/);
  // Its bytes as they are on disk now: the frame, and the marker with the flipped bit.
  const raw = Buffer.from(damaged.raw);
  expect(raw[0]).toBe(FRAME_MARKER);
  const flipped = Buffer.from(marker);
  flipped[3] = (flipped[3] as number) ^ 0x01;
  expect(raw.includes(flipped)).toBe(true);
  expect(raw.includes(Buffer.from(marker))).toBe(false);
});

it('reads records written before the checksum existed, beside records written with it', async () => {
  const path = join(tempDir(), 'log');
  const old = [pageview('old-1'), pageview('old-2')];
  // As the log stored records before: lmdb-js's own encoding of the record object, no frame.
  const root = open({ path: join(path, 'records.mdb'), maxDbs: 16, compression: false });
  const topic = root.openDB<IngestRecord, number>({ name: 'topic:pageview' });
  await topic.put(0, old[0] as IngestRecord);
  await topic.put(1, old[1] as IngestRecord);
  await root.close();

  const writer = openEmbeddedLog({ path, writer: true });
  const fresh = pageview('new-1');
  await writer.append([fresh]);
  await writer.close();

  const messages = decodedOnly(await pollAll(path));
  expect(messages.map((m) => [m.offset, m.record])).toEqual([
    [0, old[0]],
    [1, old[1]],
    [2, fresh],
  ]);
});
