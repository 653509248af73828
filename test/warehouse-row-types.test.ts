// The rows the consumers write, against the tables they write them to: for each table, the columns its
// row type is made of (the constant the type is derived from, RowOf in @tally/warehouse) are the columns
// DESCRIBE TABLE gives on a warehouse migrated from schemas/clickhouse, with the same types, except the
// columns the table fills itself (MATERIALIZED, DEFAULT), named here. A column added to a migration and not
// to its row, or to a row and not to a migration, fails here; a row builder that writes another key fails
// the second test, and a value the engine refuses the third.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_COLUMNS, eventRow, IDENTITY_COLUMNS, identityRow } from '@tally/analytics-consumer';
import { anEvent, anIdentify, aPageview, aRevenueRecord } from '@tally/log/testing';
import { MRR_MOVEMENT_COLUMNS, VISIT_COLUMNS, VISIT_DURATION_COLUMNS, visitRow } from '@tally/reports/tables';
import { visitsOf } from '@tally/reports/traffic';
import { REVENUE_COLUMNS, revenueRow } from '@tally/revenue-consumer';
import {
  type Columns,
  columnTypeOf,
  migrate,
  openChdbWarehouse,
  RECORD_ID_COLUMNS,
  recordIdRow,
  type Warehouse,
} from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Each table a consumer writes, its columns as the row type declares them, and those the table fills. */
const TABLES: { table: string; columns: Columns; filledByTable: string[] }[] = [
  { table: 'events', columns: EVENT_COLUMNS, filledByTable: [] },
  { table: 'identities', columns: IDENTITY_COLUMNS, filledByTable: [] },
  { table: 'revenue', columns: REVENUE_COLUMNS, filledByTable: ['first_received_version'] },
  { table: 'record_ids', columns: RECORD_ID_COLUMNS, filledByTable: ['first_received_version', 'landed_at'] },
  { table: 'visits', columns: VISIT_COLUMNS, filledByTable: ['visitor_hash'] },
  { table: 'visit_durations', columns: VISIT_DURATION_COLUMNS, filledByTable: [] },
  { table: 'mrr_movements', columns: MRR_MOVEMENT_COLUMNS, filledByTable: [] },
];

const dir = mkdtempSync(join(tmpdir(), 'tally-row-types-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
});
afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Described {
  name: string;
  type: string;
  default_type: string;
}

describe.each(TABLES)('$table', ({ table, columns, filledByTable }) => {
  it("has the row type's columns, of its types, and fills only the others", async () => {
    const described = await warehouse.query<Described>(`DESCRIBE TABLE ${table}`);
    const written = described.filter((c) => !filledByTable.includes(c.name));
    expect(Object.fromEntries(written.map((c) => [c.name, columnTypeOf(c.type)]))).toEqual(columns);
    const filled = described.filter((c) => filledByTable.includes(c.name));
    expect(filled.map((c) => c.name).sort()).toEqual([...filledByTable].sort());
    for (const c of filled) expect(['MATERIALIZED', 'DEFAULT'], c.name).toContain(c.default_type);
  });
});

const NOW = Date.parse('2026-03-10T12:00:00Z');
const pageview = aPageview({ timestamp: NOW, data: { url: 'https://shop.example/pricing' } });
const event = anEvent({ timestamp: NOW + 1000, data: { event_data: { plan: 'pro' } } });
const identify = anIdentify({ timestamp: NOW });
const revenue = aRevenueRecord({ timestamp: NOW, data: { amount: 49.99, metadata: { plan: 'pro' } } });
const [visit] = visitsOf([eventRow(pageview), eventRow(event)]);

/** What each builder writes, by table. */
const BUILT: { table: string; columns: Columns; rows: () => object[] }[] = [
  { table: 'events', columns: EVENT_COLUMNS, rows: () => [eventRow(pageview), eventRow(event)] },
  { table: 'identities', columns: IDENTITY_COLUMNS, rows: () => [identityRow(identify)] },
  { table: 'revenue', columns: REVENUE_COLUMNS, rows: () => [revenueRow(revenue)] },
  { table: 'record_ids', columns: RECORD_ID_COLUMNS, rows: () => [recordIdRow(pageview)] },
  { table: 'visits', columns: VISIT_COLUMNS, rows: () => (visit ? [visitRow('p', visit, 1)] : []) },
];

describe.each(BUILT)('the rows built for $table', ({ table, columns, rows }) => {
  it('have exactly its columns', () => {
    const built = rows();
    expect(built.length).toBeGreaterThan(0);
    for (const row of built) expect(Object.keys(row).sort()).toEqual(Object.keys(columns).sort());
  });

  it('are stored as they are', async () => {
    const built = rows() as Record<string, unknown>[];
    await warehouse.insert(table, built);
    const [stored] = await warehouse.query<{ n: number }>(`SELECT count() AS n FROM ${table}`);
    expect(Number(stored?.n)).toBe(built.length);
  });
});
