// `tally import csv`: every line checked before anything lands, a message per bad line, ids derived from
// project and line content (a re-run appends the same ids, which the consumers' first-copy rule drops), and
// the records appended to the real embedded record log of a data directory of its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { openRecordLog } from '@tally/log';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli } from './cli.ts';
import { CsvImportError, revenueRecordsFromCsv } from './import-csv.ts';

const CSV = `customer,date,type,amount,currency,mrr_change,subscription,plan,interval
cus_a,2026-01-05,subscription,49.00,USD,49,sub_a,pro,month
cus_a,2026-02-05,upgrade,99.00,usd,50,sub_a,team,month
cus_b,2026-01-20,purchase,15,EUR,,,,
cus_a,2026-03-05,churn,0,USD,-99,sub_a,team,month
`;

describe('revenueRecordsFromCsv', () => {
  it('turns each line into a contract-valid revenue record with a content-derived id', () => {
    const records = revenueRecordsFromCsv(CSV, 'shop', 1_800_000_000_000);
    expect(
      records.map((r) => [r.data.customer_id, r.data.event_type, r.data.amount, r.data.mrr_impact]),
    ).toEqual([
      ['cus_a', 'subscription', 49, 49],
      ['cus_a', 'upgrade', 99, 50],
      ['cus_b', 'purchase', 15, undefined],
      ['cus_a', 'churn', 0, -99],
    ]);
    expect(records[1]?.data.currency).toBe('USD');
    expect(records[0]?.timestamp).toBe(Date.UTC(2026, 0, 5));
    expect(records[0]?.data.metadata).toEqual({ source: 'csv-import', plan: 'pro', interval: 'month' });
    const again = revenueRecordsFromCsv(CSV, 'shop', 1_900_000_000_000);
    expect(again.map((r) => r.id)).toEqual(records.map((r) => r.id));
    expect(new Set(records.map((r) => r.id)).size).toBe(4);
    const other = revenueRecordsFromCsv(CSV, 'blog', 1_800_000_000_000);
    expect(other[0]?.id).not.toBe(records[0]?.id);
  });

  it('names every bad line, column and problem, and answers no record', () => {
    const bad = `customer,date,type,amount,mrr_change
,2026-01-05,subscription,49,49
cus_a,05/01/2026,subscription,49,49
cus_a,2026-01-05,gift,49,
cus_a,2026-01-05,subscription,-3,
cus_a,2026-01-05,subscription,ten,x
cus_ok,2026-01-05,subscription,49,49
cus_ok,2026-01-05,subscription,49,49
`;
    let error: unknown;
    try {
      revenueRecordsFromCsv(bad, 'shop', 0);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CsvImportError);
    const problems = (error as CsvImportError).problems;
    expect(problems[0]).toMatch(/^line 2, customer: is empty/);
    expect(problems[1]).toMatch(/^line 3, date: "05\/01\/2026" is not a date/);
    expect(problems[2]).toMatch(/^line 4, type: "gift" is not one of purchase/);
    expect(problems[3]).toMatch(/^line 5, amount: .*amount/);
    expect(problems[4]).toMatch(/^line 6, amount: "ten" is not a number/);
    expect(problems[5]).toMatch(/^line 6, mrr_change: "x" is not a number/);
    expect(problems[6]).toMatch(/^line 8, \(line\): repeats line 7/);
    expect(problems).toHaveLength(7);
  });

  it('refuses an unknown or a missing column', () => {
    expect(() => revenueRecordsFromCsv('customer,date,type,price\n', 'shop', 0)).toThrow(
      /unknown column "price"[\s\S]*required column "amount" is missing/,
    );
  });
});

describe('tally import csv', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-import-csv-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let stderr = '';
  let stdout = '';
  beforeEach(() => {
    stderr = '';
    stdout = '';
    vi.stubEnv('TALLY_DATA_DIR', dir);
    vi.stubEnv('TALLY_ENV_FILE', '/dev/null');
    for (const name of ['REDIS_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'CLICKHOUSE_URL'])
      vi.stubEnv(name, '');
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  /** The revenue records the data directory's embedded log holds, read by a consumer group of the test. */
  async function loggedIds(group: string): Promise<string[]> {
    vi.stubEnv('TALLY_DATA_DIR', dir);
    const log = await openRecordLog(loadConfig(), { reader: true });
    try {
      const consumer = log.consumer({ group, topics: ['revenue'] });
      const ids: string[] = [];
      for (;;) {
        const batch = await consumer.poll({ max: 100, waitMs: 0 });
        if (batch.length === 0) break;
        for (const m of batch) if ('record' in m && m.record) ids.push(m.record.id);
        await consumer.commit(batch);
      }
      await consumer.close();
      return ids;
    } finally {
      await log.close();
    }
  }

  it('appends nothing for a file with a bad line, and exits 1 naming the line', async () => {
    const file = join(dir, 'bad.csv');
    writeFileSync(file, `${CSV}cus_c,2026-01-01,subscription,abc,USD,,,,\n`);
    expect(await runCli(['import', 'csv', '--project', 'shop', file])).toBe(1);
    expect(stderr).toMatch(/nothing imported: 1 problem\nline 6, amount: "abc" is not a number/);
    expect(stderr).not.toMatch(/ at /);
    expect(await loggedIds('check-bad')).toEqual([]);
  });

  it('--dry-run counts the records and appends nothing', async () => {
    const file = join(dir, 'dry.csv');
    writeFileSync(file, CSV);
    expect(await runCli(['import', 'csv', '--project', 'shop', '--dry-run', file])).toBe(0);
    expect(stdout).toMatch(/would import 4 revenue record\(s\) into shop/);
    expect(await loggedIds('check-dry')).toEqual([]);
  });

  it('appends every record of a good file, with the same ids on a re-run', async () => {
    const file = join(dir, 'good.csv');
    writeFileSync(file, CSV);
    expect(await runCli(['import', 'csv', '--project', 'shop', file])).toBe(0);
    expect(stdout).toMatch(/appended 4 revenue record\(s\) for shop/);
    const first = await loggedIds('check-good');
    expect(first).toEqual(revenueRecordsFromCsv(CSV, 'shop', 0).map((r) => r.id));
    expect(await runCli(['import', 'csv', '--project', 'shop', file])).toBe(0);
    // The log keeps both copies; the consumers store the first record of each id (record_ids) only.
    expect(await loggedIds('check-good-2')).toEqual([...first, ...first]);
  });

  it('answers a usage error without --project', async () => {
    expect(await runCli(['import', 'csv', 'x.csv'])).toBe(2);
    expect(stderr).toMatch(/tally import csv --project P FILE/);
  });
});
