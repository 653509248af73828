// The conformance suite every warehouse backend runs (chDB directly; a ClickHouse engine through
// @clickhouse/client): the same SQL, the same JSON, the same errors, the same migrations and views. Each
// backend's test calls describeWarehouseConformance with a factory that opens a warehouse on a database of
// the test's own; the reports' suite (@tally/reports/conformance) runs beside it on the same backends.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WarehouseError } from './errors.ts';
import { PARTITION_KEYS } from './insert-blocks.ts';
import { describeMigrationConformance } from './migration-conformance.ts';
import { MIGRATIONS_DIR, MigrationChangedError, migrate, readMigrations } from './migrations.ts';
import { storedRecordIds } from './record-ids.ts';
import { EVENT_DAY as DAY, eventRow, freshWarehouses, type OpenWarehouse } from './testing.ts';

export type { OpenWarehouse } from './testing.ts';

export function describeWarehouseConformance(name: string, open: OpenWarehouse): void {
  describe(`warehouse conformance: ${name}`, () => {
    describeMigrationConformance(open);
    /** A warehouse on a database of this test's own, migrated unless told otherwise. */
    const fresh = freshWarehouses(open);

    it('answers a ping and returns rows as JSON with 64-bit integers and decimals as numbers', async () => {
      const w = await fresh(false);
      await w.ping();
      const [row] = await w.query(
        `SELECT toUInt64(3) AS n, count() AS c, toDecimal128('12.5', 6) AS d, 'x' AS s, [1, 2] AS a,
                map('k', 'v') AS m, fromUnixTimestamp64Milli(toInt64(1767571200123), 'UTC') AS t, true AS b, NULL AS z
         FROM numbers(2)`,
      );
      expect(row).toEqual({
        n: 3,
        c: 2,
        d: 12.5,
        s: 'x',
        a: [1, 2],
        m: { k: 'v' },
        t: '2026-01-05 00:00:00.123',
        b: true,
        z: null,
      });
    });

    it('binds {name:Type} parameters, whatever characters strings hold', async () => {
      const w = await fresh(false);
      const tricky = "it's a \\ back\tslash\nand 'quotes' {braces}";
      const [row] = await w.query(
        'SELECT {s:String} AS s, {n:Int64} AS n, {a:Array(String)} AS a, {u:UInt32} + 1 AS u',
        { s: tricky, n: 1767571200123, a: ["x'y", 'z'], u: 41 },
      );
      expect(row).toEqual({ s: tricky, n: 1767571200123, a: ["x'y", 'z'], u: 42 });
      await w.command('CREATE TABLE t (s String) ENGINE = MergeTree ORDER BY s');
      await w.command('INSERT INTO t SELECT {s:String}', { s: tricky });
      expect(await w.query('SELECT s FROM t')).toEqual([{ s: tricky }]);
    });

    it('returns a query in the format it names, as the engine writes it', async () => {
      const w = await fresh(false);
      expect(await w.queryText("SELECT 1 AS a, 'x,y' AS b FORMAT CSV")).toBe('1,"x,y"\n');
      expect(await w.queryText('SELECT number AS n FROM numbers(2) FORMAT JSONEachRow')).toBe(
        '{"n":0}\n{"n":1}\n',
      );
    });

    it("keeps the engine's text of an error out of its message (logs get the message)", async () => {
      const w = await fresh(false);
      const error = await w.query("SELECT throwIf(1, 'secret value 42')").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WarehouseError);
      expect((error as WarehouseError).message).toMatch(/^ClickHouse error 395\b/);
      expect((error as WarehouseError).message).not.toContain('secret value');
      expect((error as WarehouseError).detail).toContain('secret value 42');
      expect(JSON.stringify(error)).not.toContain('secret value');
    });

    it('raises WarehouseError with the ClickHouse code, not retryable, for bad SQL', async () => {
      const w = await fresh(false);
      const unknownTable = await w.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
      expect(unknownTable).toBeInstanceOf(WarehouseError);
      expect(unknownTable).toMatchObject({ code: 60, retryable: false });
      const syntax = await w.command('SELEC 1').catch((e: unknown) => e);
      expect(syntax).toMatchObject({ code: 62, retryable: false });
    });

    it('applies every migration once, records them, and refuses an applied one that changed', async () => {
      const w = await fresh(false);
      const names = readMigrations().map((m) => m.name);
      expect(await migrate(w)).toEqual({ applied: names, alreadyApplied: [] });
      expect(await migrate(w)).toEqual({ applied: [], alreadyApplied: names });
      const tables = await w.query<{ name: string }>(
        'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
      );
      expect(tables.map((t) => t.name)).toEqual(
        expect.arrayContaining(['events', 'identities', 'revenue', 'pageviews', 'revenue_records']),
      );
      const changed = mkdtempSync(join(tmpdir(), 'tally-migrations-'));
      cpSync(MIGRATIONS_DIR, changed, { recursive: true });
      writeFileSync(join(changed, `${names[0]}.sql`), 'SELECT 1;\n');
      await expect(migrate(w, changed)).rejects.toBeInstanceOf(MigrationChangedError);
    });

    it('stores a record delivered twice once (ReplacingMergeTree on the record id, read with FINAL)', async () => {
      const w = await fresh();
      const row = eventRow({ project_id: 'dup' });
      await w.insert('events', [row]);
      await w.insert('events', [row, eventRow({ project_id: 'dup', type: 'event', event_name: 'signup' })]);
      const [counts] = await w.query(
        "SELECT (SELECT count() FROM pageviews WHERE project_id = 'dup') AS pageviews, " +
          "(SELECT count() FROM custom_events WHERE project_id = 'dup') AS events",
      );
      expect(counts).toEqual({ pageviews: 1, events: 1 });
    });

    it('lands rows of 150 months in one insert: no INSERT block spans more partitions than the engine takes', async () => {
      const w = await fresh();
      // A backfill of a long history, or one client's timestamps years apart: one row per month.
      const months = Array.from({ length: 150 }, (_, i) => Date.UTC(2010, i, 15, 12));
      await w.insert(
        'events',
        months.map((timestamp) => eventRow({ project_id: 'history', timestamp, received_at: timestamp })),
      );
      await w.insert(
        'visits',
        months.map((start, i) => ({
          project_id: 'history',
          visitor_id: `v${i}`,
          start,
          end: start + 60_000,
          version: 1,
          is_deleted: 0,
        })),
      );
      const [counts] = await w.query(
        `SELECT (SELECT count() FROM events FINAL WHERE project_id = 'history') AS events,
                (SELECT uniqExact(_partition_id) FROM events WHERE project_id = 'history') AS event_months,
                (SELECT count() FROM visits FINAL WHERE project_id = 'history') AS visits`,
      );
      expect(counts).toEqual({ events: 150, event_months: 150, visits: 150 });
    });

    it("knows every partitioned table's partition key and computes a row's partition as the engine does", async () => {
      const w = await fresh();
      const tables = await w.query<{ name: string; partition_key: string }>(
        `SELECT name, partition_key FROM system.tables
         WHERE database = currentDatabase() AND partition_key != '' ORDER BY name`,
      );
      expect(
        Object.fromEntries(tables.map((t) => [t.name, t.partition_key])),
        'a partitioned table needs its key in PARTITION_KEYS (insert-blocks.ts)',
      ).toEqual(Object.fromEntries(Object.entries(PARTITION_KEYS).map(([t, k]) => [t, k.expression])));
      // The first and last millisecond of a month, in UTC.
      const edges = [
        Date.UTC(2025, 11, 31, 23, 59, 59, 999),
        Date.UTC(2026, 0, 1),
        Date.UTC(2026, 1, 28, 23),
      ];
      const rows = edges.map((timestamp) => eventRow({ project_id: 'edges', timestamp }));
      await w.insert('events', rows);
      const stored = await w.query<{ id: string; partition: string }>(
        "SELECT id, _partition_id AS partition FROM events WHERE project_id = 'edges'",
      );
      for (const row of rows) {
        const engine = stored.find((r) => r.id === row.id)?.partition;
        expect(engine).toBe(String(PARTITION_KEYS.events?.of(row)));
      }
    });

    it("tells the two TOO_MANY_PARTS (252) refusals apart by the engine's message", async () => {
      const w = await fresh();
      // One INSERT block in 150 partitions (an INSERT … SELECT is one block): this statement never passes.
      const partitions = await w
        .command(
          `INSERT INTO events (project_id, type, id, timestamp, received_at)
           SELECT 'p', 'pageview', toString(number), toDateTime64('2010-01-15 00:00:00', 3, 'UTC') + toIntervalMonth(number),
                  now64(3, 'UTC')
           FROM numbers(150)`,
        )
        .catch((e: unknown) => e);
      expect(partitions).toBeInstanceOf(WarehouseError);
      expect(partitions).toMatchObject({ code: 252, tooLarge: true, retryable: false, refusedData: false });
      expect((partitions as WarehouseError).detail).toMatch(/too many partitions for single insert block/i);
      // Parts piling up faster than merges (here: a table that takes one part per partition at most): an
      // overload, which passes once merges catch up.
      await w.command(
        'CREATE TABLE few_parts (x UInt8) ENGINE = MergeTree ORDER BY x SETTINGS parts_to_throw_insert = 1',
      );
      await w.command('INSERT INTO few_parts VALUES (1)');
      const parts = await w.command('INSERT INTO few_parts VALUES (2)').catch((e: unknown) => e);
      expect(parts).toBeInstanceOf(WarehouseError);
      expect(parts).toMatchObject({ code: 252, tooLarge: false, retryable: true });
      expect((parts as WarehouseError).detail).toMatch(/too many parts/i);
      // Neither message reaches a log line.
      for (const error of [partitions, parts] as WarehouseError[]) {
        expect(error.message).toMatch(/^ClickHouse error 252\b/);
        expect(error.message).not.toMatch(/partition|parts \(/i);
      }
    });

    it("tells a query over its own memory limit (too large) from the server's memory running out (an overload)", async () => {
      const w = await fresh(false);
      const query = await w
        .query('SELECT groupArray(number) AS a FROM numbers(10000000) SETTINGS max_memory_usage = 10000000')
        .catch((e: unknown) => e);
      expect(query).toBeInstanceOf(WarehouseError);
      expect(query).toMatchObject({ code: 241, tooLarge: true, retryable: false });
      const total = new WarehouseError('ClickHouse error 241', {
        code: 241,
        detail:
          'Code: 241. DB::Exception: (total) memory limit exceeded: would use 30.01 GiB, maximum: 30.00 GiB',
      });
      expect(total).toMatchObject({ tooLarge: false, retryable: true });
    });

    it('looks up the record ids of a batch of 5,000 of one project, whatever carries the parameters', async () => {
      const w = await fresh();
      const ids = Array.from({ length: 5000 }, () => randomUUID());
      const stored = ids.filter((_, i) => i % 3 === 0);
      await w.insert(
        'record_ids',
        stored.map((id) => ({ project_id: 'many', id, type: 'pageview', received_at: DAY })),
      );
      expect([...(await storedRecordIds(w, 'many', ids))].sort()).toEqual([...stored].sort());
    });

    it('attributes earlier anonymous events to the customer a later identify names', async () => {
      const w = await fresh();
      await w.insert('events', [
        eventRow({ project_id: 'id', visitor_id: 'v1', session_id: 's1' }),
        eventRow({ project_id: 'id', visitor_id: 'v2', session_id: 's2' }),
      ]);
      await w.insert('identities', [
        {
          project_id: 'id',
          id: randomUUID(),
          timestamp: DAY + 7_200_000,
          received_at: DAY + 7_200_000,
          visitor_id: 'v1',
          visitor_id_derived: false,
          session_id: 's9',
          customer_id: 'cus_1',
          user_agent: '',
          extra: '',
        },
      ]);
      const rows = await w.query(
        "SELECT visitor_id, customer_id FROM pageviews WHERE project_id = 'id' ORDER BY visitor_id",
      );
      expect(rows).toEqual([
        { visitor_id: 'v1', customer_id: 'cus_1' },
        { visitor_id: 'v2', customer_id: '' },
      ]);
      const [raw] = await w.query("SELECT count() AS n FROM events WHERE project_id = 'id'");
      expect(raw).toEqual({ n: 2 }); // history is not rewritten
    });
  });
}
