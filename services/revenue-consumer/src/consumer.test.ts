// The revenue consumer keeps mrr_movements: after each batch (duplicates included, so that a crash between
// storing records and refreshing movements is repaired by the redelivery), and at start for a warehouse
// whose table is still empty. Real chDB and a real embedded log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestRecord } from '@tally/contract';
import { type LogMessage, openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { workedExample } from '@tally/warehouse/testing';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { landRevenue, startRevenueConsumer } from './consumer.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-revenue-consumer-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
});
afterAll(async () => {
  await warehouse.close();
  rmSync(dir, { recursive: true, force: true });
});

function messages(project: string): LogMessage[] {
  return workedExample(project).map((data, offset) => {
    const record = testRecord('revenue', { project_id: project }) as IngestRecord;
    return { topic: 'revenue', partition: 0, offset, record: { ...record, data } as IngestRecord };
  });
}
const movementCount = async (project: string) =>
  (
    await warehouse.query<{ n: number }>(
      'SELECT count() AS n FROM mrr_movements_current WHERE project_id = {p:String}',
      { p: project },
    )
  )[0]?.n;

it('refreshes the movements of every customer in a batch, also when every record was a duplicate', async () => {
  const batch = messages('dup');
  expect(await landRevenue(warehouse, batch)).toEqual({ stored: 9, duplicates: 0 });
  expect(await movementCount('dup')).toBe(7);

  // As if the process had died after storing the records and before refreshing the movements.
  await warehouse.command(
    "ALTER TABLE mrr_movements DELETE WHERE project_id = 'dup' SETTINGS mutations_sync = 1",
  );
  expect(await movementCount('dup')).toBe(0);
  expect(await landRevenue(warehouse, batch)).toEqual({ stored: 0, duplicates: 9 });
  expect(await movementCount('dup')).toBe(7);
});

it('fills an empty mrr_movements from the stored revenue when it starts', async () => {
  await landRevenue(warehouse, messages('old'));
  await warehouse.command('TRUNCATE TABLE mrr_movements');
  const log = openEmbeddedLog({ path: join(dir, 'log') });
  const consumer = startRevenueConsumer({ log, warehouse, batch: { maxRecords: 100, maxWaitMs: 50 } });
  try {
    await vi.waitFor(async () => expect(await movementCount('old')).toBe(7), {
      timeout: 10_000,
      interval: 100,
    });
    expect(await movementCount('dup')).toBe(7);
  } finally {
    await consumer.stop();
    await log.close();
  }
});
