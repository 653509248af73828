// record_ids is bounded: an id is kept RECORD_IDS_KEPT_DAYS after it landed (the table's TTL, migration 010),
// which the constant the code documents and uses must say; a merge drops an id landed longer ago, and an id
// landed within the window is kept however old its record is.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openChdbWarehouse } from './chdb/chdb-warehouse.ts';
import { MIGRATIONS_DIR, migrate } from './migrations.ts';
import { RECORD_IDS_KEPT_DAYS, recordKey, storedArrivals, storedRecordIds } from './record-ids.ts';
import type { Warehouse } from './warehouse.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-record-ids-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: dir, database: 'ids' });
  await migrate(warehouse);
});
afterAll(async () => {
  await warehouse.close();
  rmSync(dir, { recursive: true, force: true });
});

it('keeps the TTL of record_ids equal to RECORD_IDS_KEPT_DAYS', () => {
  const migration = readFileSync(join(MIGRATIONS_DIR, '010_consumer_state.sql'), 'utf8');
  expect(/MODIFY TTL landed_at \+ INTERVAL (\d+) DAY/.exec(migration)?.[1]).toBe(
    String(RECORD_IDS_KEPT_DAYS),
  );
});

it('drops an id landed longer ago than the window at a merge, and keeps one within it, whatever its record’s age', async () => {
  const day = 86_400_000;
  const old = '00000000-0000-4000-8000-000000000001';
  const recent = '00000000-0000-4000-8000-000000000002';
  await warehouse.command(
    `INSERT INTO record_ids (project_id, id, type, received_at, landed_at) VALUES
       ('p', '${old}', 'pageview', fromUnixTimestamp64Milli(${Date.now() - 400 * day}, 'UTC'), now() - INTERVAL ${RECORD_IDS_KEPT_DAYS + 1} DAY),
       ('p', '${recent}', 'pageview', fromUnixTimestamp64Milli(${Date.now() - 400 * day}, 'UTC'), now() - INTERVAL ${RECORD_IDS_KEPT_DAYS - 1} DAY)`,
  );
  await warehouse.command('OPTIMIZE TABLE record_ids FINAL');
  expect([...(await storedRecordIds(warehouse, 'p', [old, recent]))]).toEqual([recent]);
});

it('looks the ids of every project up together, each under its own project only', async () => {
  const id = (n: number) => `00000000-0000-4000-8000-1000000000${String(n).padStart(2, '0')}`;
  const at = (n: number) => Date.UTC(2026, 0, 1) + n;
  // id 1 stored by project a, id 2 by b, id 3 by both (a client reusing an id across projects).
  await warehouse.insert('record_ids', [
    { project_id: 'a', id: id(1), type: 'pageview', received_at: at(1) },
    { project_id: 'b', id: id(2), type: 'event', received_at: at(2) },
    { project_id: 'a', id: id(3), type: 'pageview', received_at: at(3) },
    { project_id: 'b', id: id(3), type: 'revenue', received_at: at(4) },
  ]);
  const arrivals = await storedArrivals(warehouse, [
    { project: 'a', id: id(1) },
    { project: 'a', id: id(2) }, // stored, but by b
    { project: 'b', id: id(1) }, // stored, but by a
    { project: 'b', id: id(2) },
    { project: 'b', id: id(3) },
    { project: 'c', id: id(3) },
    { project: 'a', id: id(4) }, // stored by nobody
  ]);
  expect(Object.fromEntries(arrivals)).toEqual({
    [recordKey('a', id(1))]: at(1),
    [recordKey('b', id(2))]: at(2),
    [recordKey('b', id(3))]: at(4),
  });
});

it('looks a batch of the default size up in one statement on chDB, and in lists any ClickHouse takes over HTTP', async () => {
  const ids = Array.from(
    { length: 20_000 },
    (_, n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  );
  await warehouse.insert(
    'record_ids',
    ids
      .filter((_, n) => n % 1000 === 0)
      .map((id) => ({ project_id: 'big', id, type: 'pageview', received_at: 1 })),
  );
  const counting = (listParameterBytes: number | undefined) => {
    const statements: number[] = [];
    const counted: Warehouse = {
      ...warehouse,
      listParameterBytes,
      query: (sql, params, options) => {
        statements.push((params?.ids as string[]).length);
        return warehouse.query(sql, params, options);
      },
    };
    return { counted, statements };
  };
  const records = ids.map((id) => ({ project: 'big', id }));
  const embedded = counting(warehouse.listParameterBytes);
  const found = await storedArrivals(embedded.counted, records);
  expect(embedded.statements).toEqual([20_000]);
  const http = counting(undefined);
  expect(await storedArrivals(http.counted, records)).toEqual(found);
  expect(http.statements.length).toBe(Math.ceil(20_000 / 1680));
  expect(Math.max(...http.statements)).toBeLessThanOrEqual(1680);
  expect(found.size).toBe(20);
});
