// The warehouse conformance suite on chDB, in this process: one data directory for the file (chDB binds
// one per process), a database per test. What a second process gets on that directory.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWarehouseConformance } from '../conformance.ts';
import { encodeRows, openChdbWarehouse } from './chdb-warehouse.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-chdb-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describeWarehouseConformance('chDB (embedded)', (database) => openChdbWarehouse({ dataDir, database }));

it('refuses a second process on the same data directory with WarehouseLockedError naming the holder', async () => {
  const holder = await openChdbWarehouse({ dataDir, database: 'lock_check' });
  try {
    const script = `
      const { openChdbWarehouse } = await import('@tally/warehouse');
      try { await openChdbWarehouse({ dataDir: ${JSON.stringify(dataDir)}, database: 'x' }); console.log('opened'); }
      catch (e) { console.log(JSON.stringify({ name: e.name, pid: e.pid, retryable: e.retryable })); }`;
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--conditions=@tally/source', '--import', 'tsx', '--input-type=module', '-e', script],
        { timeout: 30_000 },
        (error, out) => (error ? reject(error) : resolve(out)),
      ),
    );
    expect(JSON.parse(stdout.trim().split('\n').at(-1) as string)).toEqual({
      name: 'WarehouseLockedError',
      pid: process.pid,
      retryable: false,
    });
  } finally {
    await holder.close();
  }
});

it('inserts rows of the same columns as arrays of values, and rows that leave a column out as objects, its default taken', async () => {
  const rows = [
    { a: 1, b: 'x', c: [1, 2] },
    { b: 'y\n"', c: [], a: 2 }, // the same columns in another order
  ];
  const compact = encodeRows(rows);
  expect(compact.format).toBe('JSONCompactEachRow');
  expect(compact.columns).toEqual(['a', 'b', 'c']);
  expect(compact.values.toString()).toBe('[1,"x",[1,2]]\n[2,"y\\n\\"",[]]\n');
  expect(encodeRows([{ a: 1, b: 'x' }, { a: 2 }]).format).toBe('JSONEachRow');
  expect(
    encodeRows([
      { a: 1, b: 'x' },
      { a: 2, c: 'z' },
    ]).format,
  ).toBe('JSONEachRow');
  expect(
    encodeRows([
      { a: 1, b: 'x' },
      { a: 2, b: undefined },
    ]).format,
  ).toBe('JSONEachRow');

  const warehouse = await openChdbWarehouse({ dataDir, database: 'encoded_rows' });
  try {
    await warehouse.command(
      "CREATE TABLE t (a UInt32, b String DEFAULT 'default', c Array(UInt8)) ENGINE = MergeTree ORDER BY a",
    );
    await warehouse.insert('t', rows);
    await warehouse.insert('t', [
      { a: 3, c: [3] },
      { a: 4, b: 'z', c: [] },
    ]);
    expect(await warehouse.query('SELECT a, b, c FROM t ORDER BY a')).toEqual([
      { a: 1, b: 'x', c: [1, 2] },
      { a: 2, b: 'y\n"', c: [] },
      { a: 3, b: 'default', c: [3] },
      { a: 4, b: 'z', c: [] },
    ]);
  } finally {
    await warehouse.close();
  }
});
