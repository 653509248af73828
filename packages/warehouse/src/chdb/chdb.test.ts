// The warehouse conformance suite on chDB, in this process: one data directory for the file (chDB binds
// one per process), a database per test. What a second process gets on that directory.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWarehouseConformance } from '../conformance.ts';
import { openChdbWarehouse } from './chdb-warehouse.ts';

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
