// The conformance suite every warehouse backend runs (chDB directly; a ClickHouse engine through
// @clickhouse/client): the same SQL, the same JSON, the same errors, the same migrations, views and
// reports. Each backend's test calls describeWarehouseConformance with a factory that opens a warehouse
// on a database of the test's own.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatMicros, MAX_MONEY, moneyText, toMicros } from '@tally/contract';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { WarehouseError } from './errors.ts';
import { PARTITION_KEYS } from './insert-blocks.ts';
import { describeMigrationConformance } from './migration-conformance.ts';
import { MIGRATIONS_DIR, MigrationChangedError, migrate, readMigrations } from './migrations.ts';
import { storedRecordIds } from './record-ids.ts';
import { loadExchangeRates, parseExchangeRatesCsv, readExchangeRates } from './reports/exchange-rates.ts';
import { monthlyRevenue, mrrReport, readMrrInputs } from './reports/monthly-revenue.ts';
import { mrrMovements } from './reports/mrr-movements.ts';
import { backfillMrrMovements, refreshMrrMovements } from './reports/mrr-table.ts';
import { searchRevenue } from './reports/revenue-search.ts';
import { trafficReport } from './reports/traffic.ts';
import { MRR_MONTHLY_COLUMNS, mrrMonthlyRows, WORKED_EXAMPLE_MONTHS, workedExample } from './testing.ts';
import type { Warehouse } from './warehouse.ts';

export type OpenWarehouse = (database: string) => Promise<Warehouse>;

const DAY = Date.parse('2026-03-10T00:00:00Z');

function eventRow(overrides: Record<string, unknown>): Record<string, unknown> {
  return {
    project_id: 'p',
    type: 'pageview',
    id: randomUUID(),
    timestamp: DAY + 3_600_000,
    received_at: DAY + 3_600_000,
    client_timestamp: null,
    timestamp_clamped: false,
    visitor_id: 'v1',
    visitor_id_derived: false,
    session_id: 's1',
    event_name: '',
    event_data: {},
    url: 'https://shop.example/',
    hostname: 'shop.example',
    path: '/',
    referrer: '',
    referrer_source: '',
    referrer_medium: '',
    title: '',
    locale: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    utm_term: '',
    utm_content: '',
    browser: 'Chrome',
    browser_version: '124',
    os: 'Linux',
    os_version: '',
    device_type: 'desktop',
    is_bot: false,
    user_agent: '',
    extra: '',
    ...overrides,
  };
}

function revenueRow(data: ReturnType<typeof workedExample>[number], project: string, receivedAt: number) {
  return {
    project_id: project,
    transaction_id: data.transaction_id,
    id: randomUUID(),
    timestamp: data.timestamp,
    received_at: receivedAt,
    client_timestamp: data.timestamp,
    timestamp_clamped: false,
    customer_id: data.customer_id,
    visitor_id: data.visitor_fingerprint,
    session_id: data.session_id,
    event_type: data.event_type ?? '',
    amount: moneyText(data.amount),
    currency: data.currency ?? 'USD',
    mrr_impact: typeof data.mrr_impact === 'number' ? moneyText(data.mrr_impact) : null,
    is_recurring: data.is_recurring ?? null,
    customer_subscription_id: data.customer_subscription_id ?? '',
    payment_processor: 'stripe',
    metadata: Object.fromEntries(Object.entries(data.metadata ?? {}).map(([k, v]) => [k, String(v)])),
    payload: JSON.stringify(data),
    user_agent: '',
  };
}

/** mrr_monthly's money columns as exact decimal text, as the report gives them. */
const MONEY_COLUMNS = [
  'mrr_start',
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'mrr_end',
  'net_new',
]
  .map((c) => `toString(${c}) AS ${c}`)
  .join(', ');

export function describeWarehouseConformance(name: string, open: OpenWarehouse): void {
  describe(`warehouse conformance: ${name}`, () => {
    describeMigrationConformance(open);
    const opened: Warehouse[] = [];
    afterEach(async () => {
      for (const w of opened.splice(0)) await w.close();
    });
    /** A warehouse on a database of this test's own, migrated unless told otherwise. */
    async function fresh(migrated = true): Promise<Warehouse> {
      const warehouse = await open(`conformance_${randomUUID().replace(/-/g, '')}`);
      opened.push(warehouse);
      if (migrated) await migrate(warehouse);
      return warehouse;
    }

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

    it('keeps the first record of a transaction and searches metadata by key and value', async () => {
      const w = await fresh();
      const [first, second] = workedExample('conf');
      if (!first || !second) throw new Error('worked example missing');
      await w.insert('revenue', [revenueRow(first, 'rev', 1000)]);
      await w.insert('revenue', [
        revenueRow({ ...first, amount: 999 }, 'rev', 2000),
        revenueRow(second, 'rev', 3000),
      ]);
      const stored = await w.query(
        "SELECT transaction_id, amount FROM revenue_records WHERE project_id = 'rev'",
      );
      expect(stored).toEqual(
        expect.arrayContaining([
          { transaction_id: first.transaction_id, amount: 100 },
          { transaction_id: second.transaction_id, amount: 50 },
        ]),
      );
      expect(stored).toHaveLength(2);
      const found = await searchRevenue(w, { project: 'rev', metadata: { plan: 'pro' } });
      expect(found.map((r) => [r.transaction_id, r.data.amount])).toEqual([[first.transaction_id, 100]]);
      expect(await searchRevenue(w, { project: 'rev', metadata: { plan: 'pro', interval: 'x' } })).toEqual(
        [],
      );
    });

    it("reports the worked example's monthly table from stored records in any arrival order", async () => {
      const w = await fresh();
      const example = workedExample('conf-mrr');
      await w.insert(
        'revenue',
        [...example].reverse().map((data, i) => revenueRow(data, 'mrr', DAY + i)),
      );
      const report = await mrrReport(w, { project: 'mrr', from: '2026-01', to: '2026-04' });
      expect(
        report.map(
          ({ data_warnings: _w, customers_start: _s, customers_end: _e, churned_customers: _c, ...m }) => m,
        ),
      ).toEqual(WORKED_EXAMPLE_MONTHS);
      const [cash] = await w.query(
        "SELECT sum(cash_revenue) AS cash FROM revenue_cash_monthly WHERE project_id = 'mrr'",
      );
      expect(cash).toEqual({ cash: 150 + 1280 + 150 + 540 });
    });

    it('keeps mrr_movements and mrr_monthly as the worked example says, re-classifying on a late record', async () => {
      const w = await fresh();
      const example = workedExample('conf-mov');
      const [first, ...rest] = example;
      if (!first) throw new Error('worked example missing');
      const customersOf = (records: typeof example) => [...new Set(records.map((r) => r.customer_id))];
      // Everything but A's first subscription: A's upgrade looks like new business for now.
      await w.insert(
        'revenue',
        rest.map((data, i) => revenueRow(data, 'mov', DAY + i)),
      );
      await refreshMrrMovements(w, 'mov', customersOf(rest));
      const movementsOf = () =>
        w.query(
          `SELECT transaction_id, customer_id, movement, amount, mrr_before, mrr_after
           FROM mrr_movements_current WHERE project_id = 'mov' ORDER BY timestamp`,
        );
      expect((await movementsOf()).find((m) => m.customer_id === 'A')).toMatchObject({
        transaction_id: 'conf-mov_tx_3',
        movement: 'new',
        amount: 50,
      });

      // The late record arrives: A's movements are recomputed, the others stay.
      await w.insert('revenue', [revenueRow(first, 'mov', DAY + 100)]);
      await refreshMrrMovements(w, 'mov', ['A']);
      await refreshMrrMovements(w, 'mov', ['A']); // idempotent
      const tx = (n: number) => `conf-mov_tx_${n}`;
      expect(await movementsOf()).toEqual([
        {
          transaction_id: tx(1),
          customer_id: 'A',
          movement: 'new',
          amount: 100,
          mrr_before: 0,
          mrr_after: 100,
        },
        {
          transaction_id: tx(2),
          customer_id: 'B',
          movement: 'new',
          amount: 50,
          mrr_before: 0,
          mrr_after: 50,
        },
        {
          transaction_id: tx(3),
          customer_id: 'A',
          movement: 'expansion',
          amount: 50,
          mrr_before: 100,
          mrr_after: 150,
        },
        {
          transaction_id: tx(4),
          customer_id: 'B',
          movement: 'contraction',
          amount: 20,
          mrr_before: 50,
          mrr_after: 30,
        },
        {
          transaction_id: tx(5),
          customer_id: 'C',
          movement: 'new',
          amount: 100,
          mrr_before: 0,
          mrr_after: 100,
        },
        {
          transaction_id: tx(7),
          customer_id: 'B',
          movement: 'churn',
          amount: 30,
          mrr_before: 30,
          mrr_after: 0,
        },
        {
          transaction_id: tx(8),
          customer_id: 'B',
          movement: 'reactivation',
          amount: 40,
          mrr_before: 0,
          mrr_after: 40,
        },
      ]);

      const monthly = await w.query(
        `SELECT ${MRR_MONTHLY_COLUMNS} FROM mrr_monthly WHERE project_id = 'mov' ORDER BY month`,
      );
      expect(monthly).toEqual(mrrMonthlyRows(WORKED_EXAMPLE_MONTHS));
    });

    it('keeps mrr_movements and mrr_monthly equal to the fold over every record, whatever the arrival order', async () => {
      const w = await fresh();
      const record = fc.record({
        customer_id: fc.constantFrom('a', 'b', 'c'),
        customer_subscription_id: fc.constantFrom(undefined, 's1', 's2'),
        event_type: fc.constantFrom(
          'subscription' as const,
          'upgrade' as const,
          'downgrade' as const,
          'churn' as const,
          'renewal' as const,
          'purchase' as const,
          'refund' as const,
        ),
        // Small amounts, and values at the contract's bounds (sums past what a double holds exactly).
        amount: fc.oneof(
          fc.integer({ min: 1, max: 500 }),
          fc.constantFrom(MAX_MONEY, 999_999_999.999999, 0.000001),
        ),
        mrr_impact: fc.option(
          fc.oneof(
            fc.integer({ min: -150, max: 200 }),
            fc.constantFrom(MAX_MONEY, -MAX_MONEY, 999_999_999.999999, -0.000001),
          ),
          { nil: undefined },
        ),
        is_recurring: fc.option(fc.boolean(), { nil: undefined }),
        annual: fc.boolean(),
        currency: fc.constantFrom('USD', 'EUR'),
        day: fc.integer({ min: 0, max: 150 }),
        late: fc.boolean(),
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 25 }), async (generated) => {
          const project = `prop${run++}`;
          const records = generated.map((g, i) => ({
            data: {
              visitor_fingerprint: 'fp',
              session_id: 's',
              customer_id: g.customer_id,
              amount: g.event_type === 'refund' ? -g.amount : g.amount,
              currency: g.currency,
              transaction_id: `${project}_${i}`,
              event_type: g.event_type,
              timestamp: Date.UTC(2026, 0, 1) + g.day * 86_400_000,
              ...(g.customer_subscription_id && { customer_subscription_id: g.customer_subscription_id }),
              ...(g.mrr_impact !== undefined && { mrr_impact: g.mrr_impact }),
              ...(g.is_recurring !== undefined && { is_recurring: g.is_recurring }),
              ...(g.annual && { metadata: { interval: 'annual' } }),
            } as ReturnType<typeof workedExample>[number],
            late: g.late,
          }));
          // Two deliveries, each followed by the consumer's refresh of its customers.
          for (const late of [false, true]) {
            const batch = records.filter((r) => r.late === late).map((r) => r.data);
            if (batch.length === 0) continue;
            await w.insert(
              'revenue',
              batch.map((data, i) => revenueRow(data, project, DAY + (late ? 1000 : 0) + i)),
            );
            await refreshMrrMovements(w, project, [...new Set(batch.map((r) => r.customer_id))]);
          }

          const inputs = await readMrrInputs(w, { project });
          const expected = mrrMovements(inputs).movements.map((m) => ({
            transaction_id: m.transaction_id,
            movement: m.kind,
            amount: formatMicros(m.amount),
            mrr_before: formatMicros(m.prev),
            mrr_after: formatMicros(m.next),
          }));
          const stored = await w.query(
            `SELECT transaction_id, movement, toString(amount) AS amount, toString(mrr_before) AS mrr_before,
                    toString(mrr_after) AS mrr_after FROM mrr_movements_current
             WHERE project_id = {project:String} ORDER BY timestamp, transaction_id`,
            { project },
          );
          const byTx = (a: Record<string, unknown>, b: Record<string, unknown>) =>
            String(a.transaction_id).localeCompare(String(b.transaction_id));
          expect([...stored].sort(byTx)).toEqual([...expected].sort(byTx));

          const report = monthlyRevenue(inputs, '2026-01', '2026-06');
          const monthly = await w.query<Record<string, number | string | null>>(
            `SELECT substring(toString(month), 1, 7) AS month, currency, ${MONEY_COLUMNS},
                    gross_revenue_churn_rate, net_revenue_churn_rate, arpa
             FROM mrr_monthly WHERE project_id = {project:String} ORDER BY currency, month`,
            { project },
          );
          for (const row of monthly) {
            const want = report.find((r) => r.month === row.month && r.currency === row.currency);
            expect(want, `${row.month} ${row.currency}`).toBeDefined();
            if (!want) continue;
            for (const key of [
              'mrr_start',
              'new',
              'expansion',
              'reactivation',
              'contraction',
              'churn',
              'mrr_end',
              'net_new',
            ] as const) {
              expect(row[key], `${row.month} ${row.currency} ${key}`).toBe(want[key]);
            }
            // The bridge closes exactly in the view too.
            const micros = (key: string) => toMicros(String(row[key]));
            expect(
              micros('new') +
                micros('expansion') +
                micros('reactivation') -
                micros('contraction') -
                micros('churn'),
            ).toBe(micros('mrr_end') - micros('mrr_start'));
            // Ratios are doubles on both sides, divided in a different order: equal to 12 significant digits.
            for (const key of ['gross_revenue_churn_rate', 'net_revenue_churn_rate', 'arpa'] as const) {
              if (want[key] === null) expect(row[key], key).toBeNull();
              else {
                const expected = Number(want[key]);
                const difference = Math.abs((row[key] as number) - expected);
                expect(difference, `${row.month} ${row.currency} ${key}`).toBeLessThanOrEqual(
                  Math.max(1e-6, Math.abs(expected) * 1e-12),
                );
              }
            }
          }
          // Every month with a movement has its row.
          const months = new Set(
            mrrMovements(inputs).movements.map(
              (m) => `${new Date(m.timestamp).toISOString().slice(0, 7)} ${m.currency}`,
            ),
          );
          expect(new Set(monthly.map((r) => `${r.month} ${r.currency}`))).toEqual(months);
        }),
        { numRuns: 15 },
      );
      // Fifteen warehouses' worth of queries: seconds on an idle machine, more on a busy one.
    }, 60_000);

    it('removes a movement that a late record makes disappear', async () => {
      const w = await fresh();
      const [base] = workedExample('conf-gone');
      if (!base) throw new Error('worked example missing');
      const at = (day: number) => Date.UTC(2026, 0, day, 12);
      const subscribe = { ...base, customer_id: 'E', transaction_id: 'gone_1', timestamp: at(1) };
      // A churn without mrr_impact takes the subscription's whole MRR away: churn 100, for now.
      const churn = {
        ...base,
        customer_id: 'E',
        transaction_id: 'gone_3',
        event_type: 'churn' as const,
        amount: 0,
        mrr_impact: undefined,
        timestamp: at(20),
      };
      await w.insert('revenue', [revenueRow(subscribe, 'gone', DAY), revenueRow(churn, 'gone', DAY + 1)]);
      await refreshMrrMovements(w, 'gone', ['E']);
      const movements = () =>
        w.query(
          "SELECT transaction_id, movement FROM mrr_movements_current WHERE project_id = 'gone' ORDER BY timestamp",
        );
      expect(await movements()).toEqual([
        { transaction_id: 'gone_1', movement: 'new' },
        { transaction_id: 'gone_3', movement: 'churn' },
      ]);
      // A downgrade to zero on day 10 arrives late: the churn on day 20 then changes nothing.
      const downgrade = {
        ...base,
        customer_id: 'E',
        transaction_id: 'gone_2',
        event_type: 'downgrade' as const,
        mrr_impact: -100,
        timestamp: at(10),
      };
      await w.insert('revenue', [revenueRow(downgrade, 'gone', DAY + 2)]);
      await refreshMrrMovements(w, 'gone', ['E']);
      expect(await movements()).toEqual([
        { transaction_id: 'gone_1', movement: 'new' },
        { transaction_id: 'gone_2', movement: 'churn' },
      ]);
    });

    it('fills mrr_movements from stored revenue when the table is empty', async () => {
      const w = await fresh();
      await w.insert(
        'revenue',
        workedExample('conf-fill').map((data, i) => revenueRow(data, 'fill', DAY + i)),
      );
      expect(await backfillMrrMovements(w)).toBe(4); // customers A, B, C, D
      expect(await backfillMrrMovements(w)).toBe(0); // not empty any more
      const [count] = await w.query(
        "SELECT count() AS n FROM mrr_movements_current WHERE project_id = 'fill'",
      );
      expect(count).toEqual({ n: 7 });
    });

    it('reports traffic: pageviews, visitors, sessions and events of a range, without bots', async () => {
      const w = await fresh();
      await w.insert('events', [
        eventRow({
          project_id: 'tr',
          path: '/a',
          visitor_id: 'v1',
          session_id: 's1',
          referrer_source: 'Google',
        }),
        eventRow({ project_id: 'tr', path: '/a', visitor_id: 'v2', session_id: 's2' }),
        eventRow({
          project_id: 'tr',
          path: '/b',
          visitor_id: 'v1',
          session_id: 's3',
          utm_campaign: 'spring',
        }),
        eventRow({
          project_id: 'tr',
          type: 'event',
          event_name: 'signup',
          visitor_id: 'v1',
          session_id: 's1',
        }),
        eventRow({ project_id: 'tr', path: '/a', visitor_id: 'bot', session_id: 'b', is_bot: true }),
        eventRow({ project_id: 'tr', path: '/late', timestamp: DAY + 86_400_000 * 5 }),
      ]);
      const report = await trafficReport(w, { project: 'tr', from: '2026-03-10', to: '2026-03-10' });
      expect(report).toMatchObject({ pageviews: 3, visitors: 2, sessions: 3, events: 1 });
      expect(report.paths).toEqual([
        { path: '/a', pageviews: 2, visitors: 2 },
        { path: '/b', pageviews: 1, visitors: 1 },
      ]);
      expect(report.event_names).toEqual([{ event_name: 'signup', events: 1, visitors: 1 }]);
      expect(report.days).toEqual([{ day: '2026-03-10', pageviews: 3, visitors: 2, sessions: 3, events: 1 }]);
    });

    it('stores exchange rates as loaded text, the latest load of a rate replacing the earlier', async () => {
      const w = await fresh();
      await loadExchangeRates(
        w,
        parseExchangeRatesCsv('month,currency,rate_to_EUR\n2026-01,USD,0.920000000001\n'),
      );
      await loadExchangeRates(w, parseExchangeRatesCsv('date,currency,rate_to_EUR\n2026-01-31,GBP,1.17\n'));
      await loadExchangeRates(w, parseExchangeRatesCsv('month,currency,rate_to_EUR\n2026-01,USD,0.93\n'));
      expect(await readExchangeRates(w)).toEqual([
        { base: 'EUR', currency: 'GBP', period: '2026-01-31', rate: '1.17' },
        { base: 'EUR', currency: 'USD', period: '2026-01', rate: '0.93' },
      ]);
      expect(await readExchangeRates(w, 'USD')).toEqual([]);
    });
  });
}
