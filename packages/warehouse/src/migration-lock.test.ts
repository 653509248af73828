// The migration lock's own cases, on chDB (the two-migrator cases run in every backend's conformance suite:
// migration-conformance.ts): a CREATE whose answer was lost, retried by withRetry, leaves the lock to the
// migrator that created it instead of making it wait for itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openChdbWarehouse } from './chdb/chdb-warehouse.ts';
import { WarehouseUnavailableError } from './errors.ts';
import { acquireMigrationLock, LOCK_TABLE_PREFIX } from './migration-lock.ts';
import { withRetry } from './retry.ts';
import type { Warehouse } from './warehouse.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-migration-lock-'));
let engine: Warehouse;
beforeAll(async () => {
  engine = await openChdbWarehouse({ dataDir, database: 'migration_lock' });
});
afterAll(async () => {
  await engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('keeps the lock it created when the answer to its CREATE was lost and withRetry sent it again', async () => {
  let creates = 0;
  // The engine runs the first CREATE of a lock table, then the connection "drops" before the answer.
  const lossy: Warehouse = {
    ...engine,
    kind: engine.kind,
    database: engine.database,
    query: (sql, params, options) => engine.query(sql, params, options),
    queryText: (sql) => engine.queryText(sql),
    insert: (table, rows) => engine.insert(table, rows),
    ping: () => engine.ping(),
    close: async () => {},
    async command(sql, params) {
      const create = sql.startsWith(`CREATE TABLE ${LOCK_TABLE_PREFIX}`);
      if (create) creates++;
      await engine.command(sql, params);
      if (create && creates === 1) throw new WarehouseUnavailableError('connection reset');
    },
  };
  const waitedFor: string[] = [];
  const lock = await acquireMigrationLock(withRetry(lossy, { baseDelayMs: 1 }), {
    waitMs: 0,
    onWait: (holder) => waitedFor.push(holder),
  });
  // The retry found the table there (TABLE_ALREADY_EXISTS), and the lock its own.
  expect([creates, lock.epoch, waitedFor]).toEqual([2, 1, []]);
  const [row] = await engine.query<{ comment: string }>(
    'SELECT comment FROM system.tables WHERE database = currentDatabase() AND name = {name:String}',
    { name: `${LOCK_TABLE_PREFIX}1` },
  );
  expect(JSON.parse(row?.comment ?? '{}').holder).toBe(lock.holder);
  await lock.release();
});
