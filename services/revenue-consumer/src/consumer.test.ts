// The revenue consumer keeps mrr_movements: after each batch (duplicates included, so that a crash between
// storing records and refreshing movements is repaired by the redelivery), and at start for a warehouse
// whose table is still empty; and writes none once its partitions are another member's. Real chDB and a
// real embedded log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LogMessage, openEmbeddedLog } from '@tally/log';
import { anIngestRecord, aPolledMessage, withHolding } from '@tally/log/testing';
import { workedExample } from '@tally/reports/testing';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterInserts } from '@tally/warehouse/testing';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { revenueLander, startRevenueConsumer } from './consumer.ts';

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
  return workedExample(project).map((data, offset) =>
    aPolledMessage(anIngestRecord('revenue', { project_id: project, data }), { offset }),
  );
}
/** Lands a batch as the consumer's batch loop does: each record prepared, then the batch landed. */
async function landRevenue(batch: readonly LogMessage[]): Promise<void> {
  const lander = revenueLander(warehouse);
  await lander.land(batch.map((message) => ({ message, row: lander.prepare(message) })));
}
const revenueCount = async (project: string) =>
  (
    await warehouse.query<{ n: number }>(
      'SELECT count() AS n FROM revenue FINAL WHERE project_id = {p:String}',
      {
        p: project,
      },
    )
  )[0]?.n;
const movementCount = async (project: string) =>
  (
    await warehouse.query<{ n: number }>(
      'SELECT count() AS n FROM mrr_movements_current WHERE project_id = {p:String}',
      { p: project },
    )
  )[0]?.n;

it('refreshes the movements of every customer in a batch, also when every record was a duplicate', async () => {
  const batch = messages('dup');
  await landRevenue(batch);
  expect(await revenueCount('dup')).toBe(9);
  expect(await movementCount('dup')).toBe(7);

  // As if the process had died after storing the records and before refreshing the movements.
  await warehouse.command(
    "ALTER TABLE mrr_movements DELETE WHERE project_id = 'dup' SETTINGS mutations_sync = 1",
  );
  expect(await movementCount('dup')).toBe(0);
  await landRevenue(batch);
  expect(await revenueCount('dup')).toBe(9);
  expect(await movementCount('dup')).toBe(7);
});

it('fills an empty mrr_movements from the stored revenue when it starts', async () => {
  await landRevenue(messages('old'));
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

it('keeps the first copy of a record id, whatever its transaction, however late the copy comes', async () => {
  const [first] = messages('ids');
  if (!first) throw new Error('no message');
  const copy = aPolledMessage(
    anIngestRecord('revenue', {
      ...first.record,
      received_at: first.record.received_at + 86_400_000 * 40,
      data: { ...first.record.data, transaction_id: 'another_tx', amount: 999 },
    }),
    { offset: 100 },
  );
  await landRevenue([first]);
  await landRevenue([copy]);
  const rows = await warehouse.query<{ transaction_id: string; amount: number }>(
    "SELECT transaction_id, amount FROM revenue FINAL WHERE project_id = 'ids'",
  );
  expect(rows).toEqual([{ transaction_id: 'ids_tx_1', amount: 100 }]);
  // Both in one batch: the first in log order wins.
  const [a] = messages('ids2');
  if (!a) throw new Error('no message');
  const sameIdOtherTransaction = aPolledMessage(
    anIngestRecord('revenue', { ...a.record, data: { ...a.record.data, transaction_id: 'another_tx' } }),
    { offset: 1 },
  );
  await landRevenue([a, sameIdOtherTransaction]);
  expect(await revenueCount('ids2')).toBe(1);
});

it('lands a transaction once per project, the projects of a batch looked up together', async () => {
  // Transaction ids are the client's: two projects may use the same one, and each has its own.
  const [template] = messages('t-a');
  if (!template) throw new Error('no message');
  const payment = (project: string, offset: number, amount: number) =>
    aPolledMessage(
      anIngestRecord('revenue', {
        project_id: project,
        data: { ...template.record.data, transaction_id: 'shared_tx', amount },
      }),
      { offset },
    );
  await landRevenue([payment('t-a', 0, 100)]);
  // A later copy of a's transaction (another record id) changes nothing; b's lands.
  await landRevenue([payment('t-a', 1, 555), payment('t-b', 2, 200)]);
  const rows = await warehouse.query<{ project_id: string; amount: number }>(
    "SELECT project_id, amount FROM revenue FINAL WHERE project_id IN ('t-a', 't-b') ORDER BY project_id",
  );
  expect(rows).toEqual([
    { project_id: 't-a', amount: 100 },
    { project_id: 't-b', amount: 200 },
  ]);
});

it('writes no MRR movement once its partitions are another member’s, and leaves the batch to the new holder', async () => {
  // The partitions move while a batch lands: after its transactions are stored, before the movements
  // computed from what this member read are written. Its new holder gets the batch again and writes them.
  const { log, holding } = withHolding(openEmbeddedLog({ path: join(dir, 'holding-lost') }));
  await log.append(messages('moved').map((m) => m.record));
  const losing = afterInserts(warehouse, (table, rows) => {
    if (table === 'revenue' && rows.length > 0) holding.lost = true;
  });
  const warnings: string[] = [];
  const logger = { info: () => {}, error: () => {}, warn: (_: object, line: string) => warnings.push(line) };
  const batch = { maxRecords: 100, maxWaitMs: 20 };
  const first = startRevenueConsumer({ log, warehouse: losing, batch, logger });
  try {
    await vi.waitFor(
      () => expect(warnings).toContain('revenue partitions moved to another member; batch left to it'),
      { timeout: 30_000, interval: 50 },
    );
  } finally {
    await first.stop();
  }
  expect(await revenueCount('moved')).toBe(9);
  expect(await movementCount('moved')).toBe(0);

  holding.lost = false;
  holding.id = 2;
  const next = startRevenueConsumer({ log, warehouse, batch });
  try {
    await vi.waitFor(async () => expect(await movementCount('moved')).toBe(7), {
      timeout: 30_000,
      interval: 50,
    });
  } finally {
    await next.stop();
    await log.close();
  }
});
