// `tally import csv` end to end: the file imported twice through the command line into a data directory's
// embedded record log, then the real revenue consumer over that log into real chDB: each record is stored
// once (the first-copy rule on record_ids) and the MRR movements are kept as for webhook records.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedLogDir, openEmbeddedLog } from '@tally/log';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, expect, it, vi } from 'vitest';
import { runCli } from '../packages/cli/src/cli.ts';
import { startRevenueConsumer } from '../services/revenue-consumer/src/consumer.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-revenue-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CSV = `customer,date,type,amount,currency,mrr_change,subscription,plan,interval
cus_a,2026-01-05,subscription,49.00,USD,49,sub_a,pro,month
cus_b,2026-01-20,subscription,20.00,USD,20,sub_b,basic,month
cus_a,2026-02-05,upgrade,99.00,USD,50,sub_a,team,month
cus_b,2026-03-20,churn,0,USD,-20,sub_b,basic,month
`;

it('lands each imported record once, however often the file is imported, with its MRR movements', async () => {
  const file = join(dir, 'history.csv');
  writeFileSync(file, CSV);
  vi.stubEnv('TALLY_DATA_DIR', dir);
  vi.stubEnv('TALLY_ENV_FILE', '/dev/null');
  for (const name of ['REDIS_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'CLICKHOUSE_URL'])
    vi.stubEnv(name, '');
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    expect(await runCli(['import', 'csv', '--project', 'shop', file])).toBe(0);
    expect(await runCli(['import', 'csv', '--project', 'shop', file])).toBe(0);
  } finally {
    out.mockRestore();
    vi.unstubAllEnvs();
  }

  const warehouse: Warehouse = await openChdbWarehouse({ dataDir: join(dir, 'wh'), database: 'tally' });
  await migrate(warehouse);
  const log = openEmbeddedLog({ path: embeddedLogDir(dir) });
  const consumer = startRevenueConsumer({ log, warehouse, batch: { maxRecords: 3, maxWaitMs: 50 } });
  const count = async (sql: string) => (await warehouse.query<{ n: number }>(sql))[0]?.n;
  try {
    // 8 records appended (two imports); the movement of the last customer's churn shows all were read.
    await vi.waitFor(
      async () =>
        expect(
          await count(
            "SELECT count() AS n FROM mrr_movements_current WHERE project_id = 'shop' AND customer_id = 'cus_b'",
          ),
        ).toBe(2),
      { timeout: 20_000, interval: 100 },
    );
    // Without FINAL: no second copy was stored at all (the first-copy rule, not a later merge).
    expect(await count("SELECT count() AS n FROM revenue WHERE project_id = 'shop'")).toBe(4);
    expect(await count("SELECT count() AS n FROM mrr_movements_current WHERE project_id = 'shop'")).toBe(4);
  } finally {
    await consumer.stop();
    await log.close();
    await warehouse.close();
  }
});
