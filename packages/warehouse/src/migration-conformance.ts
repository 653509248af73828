// The migration lock, part of the conformance suite every warehouse backend runs: two migrators on one
// database (two connections, as two consumers starting together have) migrate once. Their migrations are a
// probe: the second INSERTs a row each time it runs (not idempotent on purpose), so the probe table counts
// executions. Waits are the migrators' own polling; the tests wait on promises, never on time.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  acquireMigrationLock,
  LOCK_TABLE_PREFIX,
  MigrationLockLostError,
  MigrationLockTimeoutError,
} from './migration-lock.ts';
import { migrate } from './migrations.ts';
import type { Warehouse } from './warehouse.ts';

const PROBE = ['001_probe', '002_count'];

/** A migrations directory whose second migration adds a row to `probe` each time it runs. */
function probeMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-migrations-probe-'));
  writeFileSync(
    join(dir, '001_probe.sql'),
    'CREATE TABLE IF NOT EXISTS probe (n UInt8) ENGINE = MergeTree ORDER BY n;\n',
  );
  writeFileSync(join(dir, '002_count.sql'), 'INSERT INTO probe SELECT 1;\n');
  return dir;
}

/** A promise and the function that resolves it. */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function describeMigrationConformance(open: (database: string) => Promise<Warehouse>): void {
  describe('migration lock', () => {
    const opened: Warehouse[] = [];
    afterEach(async () => {
      for (const w of opened.splice(0)) await w.close();
    });
    /** Two connections to one new database. */
    async function twoMigrators(): Promise<[Warehouse, Warehouse]> {
      const database = `migrate_${randomUUID().replace(/-/g, '')}`;
      const a = await open(database);
      opened.push(a);
      const b = await open(database);
      opened.push(b);
      return [a, b];
    }
    const executions = async (w: Warehouse) =>
      (await w.query<{ n: number }>('SELECT count() AS n FROM probe'))[0]?.n;
    const recorded = (w: Warehouse) =>
      w.query('SELECT version, count() AS copies FROM schema_migrations GROUP BY version ORDER BY version');
    const lockTables = async (w: Warehouse) =>
      (
        await w.query<{ name: string; comment: string }>(
          'SELECT name, comment FROM system.tables WHERE database = currentDatabase() AND startsWith(name, {p:String}) ORDER BY name',
          { p: LOCK_TABLE_PREFIX },
        )
      ).map((t) => ({ name: t.name, ...JSON.parse(t.comment) }));

    it('makes a second migrator wait for the first, then find every migration applied', async () => {
      const [a, b] = await twoMigrators();
      const dir = probeMigrations();
      const aInside = signal();
      const aMayGoOn = signal();
      const bWaits = signal<string>();
      // A stops inside its first migration, holding the lock, until B has found the lock held.
      const first = migrate(a, dir, {
        beforeMigration: async (name) => {
          if (name !== PROBE[0]) return;
          aInside.resolve();
          await aMayGoOn.promise;
        },
      });
      await aInside.promise;
      const [aLock] = await lockTables(a);
      expect(aLock).toMatchObject({ name: `${LOCK_TABLE_PREFIX}1`, pid: process.pid });
      expect(aLock.released).toBeUndefined();
      const second = migrate(b, dir, { lock: { pollMs: 20, onWait: (holder) => bWaits.resolve(holder) } });
      expect(await bWaits.promise).toBe(aLock.holder);
      aMayGoOn.resolve();
      expect(await first).toEqual({ applied: PROBE, alreadyApplied: [] });
      expect(await second).toEqual({ applied: [], alreadyApplied: PROBE });
      expect(await executions(a)).toBe(1);
      expect(await recorded(b)).toEqual([
        { version: 1, copies: 1 },
        { version: 2, copies: 1 },
      ]);
      // B took the lock after A released it, and released it in turn: one lock table, the newest.
      expect(await lockTables(a)).toEqual([
        expect.objectContaining({ name: `${LOCK_TABLE_PREFIX}2`, released: true }),
      ]);
    });

    it('applies each migration once when two migrators start at the same moment', async () => {
      const [a, b] = await twoMigrators();
      const dir = probeMigrations();
      const results = await Promise.all([
        migrate(a, dir, { lock: { pollMs: 20 } }),
        migrate(b, dir, { lock: { pollMs: 20 } }),
      ]);
      expect(results.flatMap((r) => r.applied).sort()).toEqual(PROBE);
      expect(results.flatMap((r) => r.alreadyApplied).sort()).toEqual(PROBE);
      expect(await executions(b)).toBe(1);
      expect(await recorded(a)).toEqual([
        { version: 1, copies: 1 },
        { version: 2, copies: 1 },
      ]);
    });

    it("takes over a holder's lock once its lease has ended (a crashed migrator), which that holder then finds lost", async () => {
      const [a, b] = await twoMigrators();
      const crashed = await acquireMigrationLock(a, { leaseMs: 1 });
      expect(await migrate(b, probeMigrations(), { lock: { pollMs: 20 } })).toEqual({
        applied: PROBE,
        alreadyApplied: [],
      });
      expect(await lockTables(b)).toEqual([
        expect.objectContaining({ name: `${LOCK_TABLE_PREFIX}${crashed.epoch + 1}`, released: true }),
      ]);
      await expect(crashed.renew()).rejects.toBeInstanceOf(MigrationLockLostError);
    });

    it('gives up after waiting as long as it may, naming the holder, and has run nothing', async () => {
      const [a, b] = await twoMigrators();
      const dir = probeMigrations();
      const holder = await acquireMigrationLock(a);
      const waited = await migrate(b, dir, { lock: { waitMs: 0 } }).catch((error: unknown) => error);
      expect(waited).toBeInstanceOf(MigrationLockTimeoutError);
      expect((waited as Error).message).toContain(holder.holder);
      expect(
        await b.query(
          "SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'probe'",
        ),
      ).toEqual([{ n: 0 }]);
      await holder.release();
      expect(await migrate(b, dir)).toEqual({ applied: PROBE, alreadyApplied: [] });
    });
  });
}
