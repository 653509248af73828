// The revenue caches' shared probe against real chDB: requests that come while a probe waits in the
// engine's queue share it (one scan for a page of panels), and a probe that has started is never joined,
// so a request always sees what landed before it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { revenueRow } from '../testing.ts';
import { probeRevenue } from './probe.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-revenue-probe-'));
let warehouse: Warehouse;
let probes = 0;
let sequence = 0;
/** Probes the engine has answered. */
let answered = 0;
/** When set, a probe's answer is held, once the engine gave it (the probe is then running), until it settles. */
let hold: Promise<void> | undefined;

const land = () => {
  sequence += 1;
  return warehouse.insert('revenue', [revenueRow({ project_id: 'probe', transaction_id: `tx_${sequence}` })]);
};

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  await land();
  const query = warehouse.query.bind(warehouse);
  warehouse.query = ((sql: string, ...rest: never[]) => {
    if (!(sql.includes('FROM revenue') && sql.includes('GROUP BY b'))) return query(sql, ...rest);
    probes += 1;
    const held = hold;
    return query(sql, ...rest).then(async (rows) => {
      answered += 1;
      await held;
      return rows;
    });
  }) as typeof warehouse.query;
}, 60_000);

afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('probeRevenue', () => {
  it('is shared by the requests that come while it waits to start', async () => {
    probes = 0;
    // The engine busy: the probes below wait behind this statement.
    const busy = warehouse.query('SELECT sleep(0.3)');
    const asked = [
      probeRevenue(warehouse, 'probe'),
      probeRevenue(warehouse, 'probe'),
      probeRevenue(warehouse, 'probe'),
    ];
    const [first, ...others] = await Promise.all(asked);
    await busy;
    expect(probes).toBe(1);
    for (const other of others) expect(other).toBe(first);
    expect(first?.history.size).toBe(1);
  });

  it('is not joined once started: a request after new revenue sees it', async () => {
    probes = 0;
    answered = 0;
    let release = () => {};
    hold = new Promise((resolve) => {
      release = resolve;
    });
    const before = probeRevenue(warehouse, 'probe');
    // It starts at once (the queue is empty) and is still running, in effect, when a record lands and
    // the next request asks: the engine has answered it, and its answer is held.
    await vi.waitFor(() => expect(answered).toBe(1));
    await land();
    hold = undefined;
    const after = await probeRevenue(warehouse, 'probe');
    release();
    expect(probes).toBe(2);
    const stamps = (p: Awaited<typeof before>) => [...p.history.values(), ...p.touches.values()].sort();
    expect(stamps(after)).not.toEqual(stamps(await before));
    expect([...after.history.values()].reduce((n, s) => n + Number(s.split(':')[0]), 0)).toBe(sequence);
  });
});
