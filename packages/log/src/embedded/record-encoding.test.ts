// A record encoded where it is made (a gateway thread) is stored byte for byte as the embedded log stores
// the record itself, whatever was encoded before it (the encoder keeps no state from one record to the
// next), and reads back through the log's consumer as the same record: appendEncoded changes where the
// encoding happens, not what is on disk.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestRecord, RecordType } from '@tally/contract';
import { open } from 'lmdb';
import { Encoder } from 'msgpackr';
import { afterEach, expect, it } from 'vitest';
import { decodedOnly } from '../conformance.ts';
import { anIngestRecord } from '../testing.ts';
import { openEmbeddedLog } from './embedded-log.ts';
import { decodeRecord, encodeRecord } from './record-encoding.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function records(): IngestRecord[] {
  const base = {
    project_id: 'p1',
    received_at: 1_764_000_000_000,
    timestamp: 1_764_000_000_000,
    client_timestamp: null,
    timestamp_clamped: false,
    user_agent: 'Mozilla/5.0',
    visitor_fingerprint_derived: true,
    country: 'FR',
  };
  const pageviews = Array.from({ length: 40 }, (_, i) =>
    anIngestRecord('pageview', {
      ...base,
      id: `0190f5e4-5f6a-7000-8000-${String(i).padStart(12, '0')}`,
      client_timestamp: i % 3 === 0 ? null : 1_764_000_000_000 - i,
      // Varying shapes: optional fields present or not, nested objects, unicode, numbers of each width.
      data: {
        session_id: `s${i}`,
        visitor_fingerprint: `v${i}`,
        url: `https://example.com/p/${i}?q=é`,
        ...(i % 2 === 0 && { referrer: 'https://www.google.com/', title: `Title ${i} ✓` }),
        ...(i % 5 === 0 && { utm: { source: 'news', medium: null } }),
        screen_width: i * 1000,
      },
    }),
  );
  return [
    ...pageviews,
    anIngestRecord('revenue', {
      ...base,
      id: '0190f5e4-5f6a-7000-8000-999999999999',
      country: null,
      data: {
        customer_id: 'c1',
        amount: 12.34,
        currency: 'EUR',
        event_type: 'charge',
        metadata: { a: [1, 2] },
      },
    }),
  ];
}

/** Every stored value of the log's topics, as raw bytes. */
function storedBytes(logPath: string, types: RecordType[]): Map<string, Buffer> {
  const root = open({ path: join(logPath, 'records.mdb'), maxDbs: 16, readOnly: true });
  try {
    const out = new Map<string, Buffer>();
    for (const type of types) {
      const db = root.openDB<IngestRecord, number>({ name: `topic:${type}` });
      for (const key of db.getKeys()) out.set(`${type}:${key}`, Buffer.from(db.getBinary(key) as Buffer));
    }
    return out;
  } finally {
    root.close();
  }
}

it('appendEncoded stores the bytes the log stores for the record, and reads back the same record', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-encoding-'));
  dirs.push(dir);
  const all = records();
  // Deep copies: appending must not depend on the objects being the same.
  const copies = structuredClone(all);

  const direct = openEmbeddedLog({ path: join(dir, 'direct'), writer: true });
  await direct.append(all);
  await direct.close();

  const encoded = openEmbeddedLog({ path: join(dir, 'encoded'), writer: true });
  // Encoded in the reverse order (so each record follows different ones than in `direct`), appended in order.
  const bytes = [...copies]
    .reverse()
    .map((record) => Buffer.from(encodeRecord(record)))
    .reverse();
  await encoded.appendEncoded(copies.map((record, i) => ({ type: record.type, bytes: bytes[i] as Buffer })));
  const consumer = encoded.consumer({ group: 'g' });
  const read = decodedOnly(await consumer.poll({ max: 100 }));
  expect(read.map((message) => message.record).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
    [...all].sort((a, b) => a.id.localeCompare(b.id)),
  );
  await consumer.close();
  await encoded.close();

  const types: RecordType[] = ['pageview', 'revenue'];
  const want = storedBytes(join(dir, 'direct'), types);
  const got = storedBytes(join(dir, 'encoded'), types);
  expect(want.size).toBe(all.length);
  expect([...got.keys()]).toEqual([...want.keys()]);
  for (const [key, value] of want) expect(got.get(key)?.equals(value), key).toBe(true);
});

it('stores a record with its region and city, and still reads one written before they existed', () => {
  const [pageview] = records();
  const placed = { ...pageview, country: 'GB', region: 'England', city: 'London' } as IngestRecord;
  expect(decodeRecord(encodeRecord(placed))).toEqual(placed);
  // A record of an older gateway: no region nor city at all (and no frame, as before the checksum).
  const { region: _r, city: _c, ...older } = placed;
  const decoded = decodeRecord(new Encoder({ copyBuffers: true }).encode(older));
  expect(decoded).toEqual(older);
  expect(decoded.region).toBeUndefined();
});
