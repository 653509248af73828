// The conformance suite every warehouse backend runs (chDB directly; a ClickHouse engine through
// @clickhouse/client): the same SQL, the same JSON, the same errors, the same migrations, views and
// reports. Each backend's test calls describeWarehouseConformance with a factory that opens a warehouse
// on a database of the test's own.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WarehouseError } from './errors.ts';
import type { Warehouse } from './index.ts';
import { MIGRATIONS_DIR, MigrationChangedError, migrate, readMigrations } from './migrations.ts';
import { mrrReport } from './reports/monthly-revenue.ts';
import { searchRevenue } from './reports/revenue-search.ts';
import { trafficReport } from './reports/traffic.ts';
import { WORKED_EXAMPLE_MONTHS, workedExample } from './testing.ts';

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
    amount: data.amount.toFixed(6),
    currency: data.currency ?? 'USD',
    mrr_impact: typeof data.mrr_impact === 'number' ? data.mrr_impact.toFixed(6) : null,
    is_recurring: data.is_recurring ?? null,
    customer_subscription_id: data.customer_subscription_id ?? '',
    payment_processor: 'stripe',
    metadata: Object.fromEntries(Object.entries(data.metadata ?? {}).map(([k, v]) => [k, String(v)])),
    payload: JSON.stringify(data),
    user_agent: '',
  };
}

export function describeWarehouseConformance(name: string, open: OpenWarehouse): void {
  describe(`warehouse conformance: ${name}`, () => {
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
  });
}
