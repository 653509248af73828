// A record damaged on disk in the embedded log never lands as altered data. On a real LMDB file and real
// chDB: records are appended, one byte inside one record's value is flipped in the file (found by a marker
// in its URL), then the analytics consumer runs over the log: that record is set aside as an undecodable
// dead letter holding its stored bytes, and the records around it land unchanged.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deadLetterId, openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { migrate, openChdbWarehouse } from '@tally/warehouse';
import { afterEach, expect, it } from 'vitest';
import { ANALYTICS_GROUP, startAnalyticsConsumer } from './consumer.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Flips one bit in every copy of `marker` in the file (LMDB may keep stale copies of a page); how many. */
function damageOnDisk(file: string, marker: string): number {
  const bytes = readFileSync(file);
  const needle = Buffer.from(marker);
  let found = 0;
  for (let i = bytes.indexOf(needle); i !== -1; i = bytes.indexOf(needle, i + 1)) {
    bytes[i + 3] = (bytes[i + 3] as number) ^ 0x01;
    found++;
  }
  writeFileSync(file, bytes);
  return found;
}

it('sets a record damaged on disk aside as a dead letter with its bytes, and lands the records around it unchanged', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-damaged-record-'));
  dirs.push(dir);
  const path = join(dir, 'log');
  const marker = `damaged-${randomUUID()}`;
  const pageview = (page: string) =>
    testRecord('pageview', {
      project_id: 'damaged',
      data: { session_id: 's1', visitor_fingerprint: 'v1', url: `https://shop.example/${page}` },
    });
  const records = [pageview('before'), pageview(marker), pageview('after')];
  const writer = openEmbeddedLog({ path, writer: true });
  await writer.append(records);
  await writer.close();

  expect(damageOnDisk(join(path, 'records.mdb'), marker)).toBeGreaterThan(0);

  const log = openEmbeddedLog({ path });
  const warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  try {
    await migrate(warehouse);
    const consumer = startAnalyticsConsumer({ log, warehouse, batch: { maxRecords: 10, maxWaitMs: 10 } });
    // Until the group has committed past all three (each landed or set aside), or 20 s have passed.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (log.groups().find((g) => g.topic === 'pageview')?.position ?? 0) < 3) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await consumer.stop();

    const letters = await log.deadLetters.list();
    expect(letters.map((l) => [l.id, l.error_code, l.record])).toEqual([
      [deadLetterId(ANALYTICS_GROUP, { topic: 'pageview', partition: 0, offset: 1 }), 'undecodable', null],
    ]);
    expect(letters[0]?.error).toMatch(/checksum/);
    // The letter keeps the bytes as they were read: the damaged marker, not the original one.
    const raw = Buffer.from(letters[0]?.raw ?? []);
    const flipped = Buffer.from(marker);
    flipped[3] = (flipped[3] as number) ^ 0x01;
    expect(raw.includes(flipped)).toBe(true);

    const rows = await warehouse.query<{ id: string; url: string }>(
      "SELECT id, url FROM events FINAL WHERE project_id = 'damaged' ORDER BY url",
    );
    expect(rows).toEqual([
      { id: records[2]?.id, url: 'https://shop.example/after' },
      { id: records[0]?.id, url: 'https://shop.example/before' },
    ]);
  } finally {
    await warehouse.close();
    await log.close();
  }
});
