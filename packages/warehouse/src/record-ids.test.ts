// record_ids is bounded: an id is kept RECORD_IDS_KEPT_DAYS after it landed (the table's TTL, migration 010),
// which the constant the code documents and uses must say; a merge drops an id landed longer ago, and an id
// landed within the window is kept however old its record is.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openChdbWarehouse } from './chdb/chdb-warehouse.ts';
import { MIGRATIONS_DIR, migrate } from './migrations.ts';
import { RECORD_IDS_KEPT_DAYS, storedRecordIds } from './record-ids.ts';
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
