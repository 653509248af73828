// Revenue through the whole pipeline as `npm start` runs it: records sent to POST /api/ingest, landed by
// the revenue consumer in the embedded warehouse, read back with the tally CLI while the process runs
// (through the query endpoint it publishes). The worked example of docs/revenue.md must give exactly
// the spec's monthly table: sent in order, in reverse order, and with every record sent twice.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  MRR_MONTHLY_COLUMNS,
  mrrMonthlyRows,
  WORKED_EXAMPLE_MONTHS,
  workedExample,
} from '@tally/reports/testing';
import { FileTokenStore } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import {
  pipelineBackends,
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
  type TallyProcess,
} from './support/tally-process.ts';

const PROJECTS = ['mrr-in-order', 'mrr-reversed', 'mrr-twice', 'revenue-metadata', 'sentinel'] as const;

// On the embedded log, and on Kafka (one partition per topic: the sentinel below is consumed last).
const backends = pipelineBackends({ partitions: 1 });

describe.each(backends)('revenue through the whole pipeline (npm start) on %s', (_name, backendEnv) => {
  let dataDir: string;
  let running: TallyProcess;
  let warehouse: Warehouse;
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    dataDir = tempDataDir();
    const store = new FileTokenStore(dataDir);
    for (const project of PROJECTS) tokens.set(project, (await store.create(project, 'secret')).token);
    await store.close();
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir, ...backendEnv() });
    warehouse = await publishedWarehouse(dataDir);
  });
  afterAll(async () => {
    await warehouse?.close();
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  async function sendRevenue(project: string, data: object) {
    const res = await send(running.url, tokens.get(project) as string, { type: 'revenue', data });
    expect(res.status, await res.clone().text()).toBe(202);
  }

  /**
   * Waits until the revenue consumer has processed everything sent so far: a sentinel record sent last
   * is stored only after every earlier record of the (single, ordered) revenue topic was processed.
   */
  async function drainRevenue() {
    const transaction = `sentinel-${randomUUID()}`;
    await sendRevenue('sentinel', {
      visitor_fingerprint: 'v',
      session_id: 's',
      customer_id: 'sentinel',
      amount: 1,
      transaction_id: transaction,
    });
    await eventually(30_000, 'the sentinel revenue record landing', async () => {
      const rows = await warehouse.query(
        "SELECT 1 FROM revenue_records WHERE project_id = 'sentinel' AND transaction_id = {t:String}",
        { t: transaction },
      );
      return rows.length === 1;
    });
  }

  async function mrrReport(project: string, ...extra: string[]) {
    const stdout = await tally(
      ['report', 'mrr', '--project', project, '--from', '2026-01', '--to', '2026-04', ...extra, '--json'],
      pipelineEnv({ TALLY_DATA_DIR: dataDir }),
    );
    return JSON.parse(stdout) as Record<string, unknown>[];
  }

  const table = WORKED_EXAMPLE_MONTHS as unknown as Record<string, unknown>[];

  /** The mrr_monthly view as an analyst reads it with SQL: the table without the two report-only columns. */
  async function expectMrrMonthlyView(project: string) {
    const want = mrrMonthlyRows(WORKED_EXAMPLE_MONTHS);
    const read = () =>
      warehouse.query(
        `SELECT ${MRR_MONTHLY_COLUMNS} FROM mrr_monthly WHERE project_id = {p:String} ORDER BY month`,
        { p: project },
      );
    // The consumer refreshes the movements right after it stores the batch's records: allow it a moment.
    await eventually(30_000, `mrr_monthly of ${project}`, async () => isDeepStrictEqual(await read(), want));
    expect(await read()).toEqual(want);
  }

  it("gives the spec's monthly table for the worked example sent in order", async () => {
    for (const data of workedExample('in-order')) await sendRevenue('mrr-in-order', data);
    await drainRevenue();
    const report = await mrrReport('mrr-in-order');
    expect(report).toMatchObject(table);
    expect(report.map((m) => m.data_warnings)).toEqual([[], [], [], []]);
    expect(await mrrReport('mrr-in-order', '--currency', 'USD')).toEqual(report);
  });

  it('gives the same table when the records arrive in reverse order', async () => {
    for (const data of workedExample('reversed').reverse()) await sendRevenue('mrr-reversed', data);
    await drainRevenue();
    expect(await mrrReport('mrr-reversed')).toMatchObject(table);
    await expectMrrMonthlyView('mrr-reversed');
  });

  it('gives the same table when every record is sent twice (retries never double-count)', async () => {
    for (const data of workedExample('twice')) {
      await sendRevenue('mrr-twice', data);
      await sendRevenue('mrr-twice', data);
    }
    await drainRevenue();
    expect(await mrrReport('mrr-twice')).toMatchObject(table);
    const [stored] = await warehouse.query(
      "SELECT count() AS n FROM revenue_records WHERE project_id = 'mrr-twice'",
    );
    expect(stored).toEqual({ n: 9 });
    await expectMrrMonthlyView('mrr-twice');
  });

  it('stores every field and finds records by metadata key and value', async () => {
    const base = { visitor_fingerprint: 'v', session_id: 's', currency: 'EUR', event_type: 'purchase' };
    await sendRevenue('revenue-metadata', {
      ...base,
      customer_id: 'c1',
      amount: 19.99,
      transaction_id: 'in_1',
      payment_processor: 'stripe',
      metadata: { plan: 'pro', coupon: 'SPRING', seats: 3 },
    });
    await sendRevenue('revenue-metadata', {
      ...base,
      customer_id: 'c2',
      amount: 29,
      transaction_id: 'in_2',
      metadata: { plan: 'pro' },
    });
    await sendRevenue('revenue-metadata', {
      ...base,
      customer_id: 'c3',
      amount: 9,
      transaction_id: 'in_3',
      metadata: { plan: 'basic', coupon: 'SPRING' },
    });
    await drainRevenue();
    const search = async (...pairs: string[]) =>
      JSON.parse(
        await tally(
          [
            'revenue',
            'search',
            '--project',
            'revenue-metadata',
            ...pairs.flatMap((p) => ['--metadata', p]),
            '--json',
          ],
          pipelineEnv({ TALLY_DATA_DIR: dataDir }),
        ),
      ) as { transaction_id: string; data: Record<string, unknown> }[];
    const both = await search('plan=pro', 'coupon=SPRING');
    expect(both).toEqual([
      expect.objectContaining({
        transaction_id: 'in_1',
        project_id: 'revenue-metadata',
        data: {
          ...base,
          customer_id: 'c1',
          amount: 19.99,
          transaction_id: 'in_1',
          payment_processor: 'stripe',
          metadata: { plan: 'pro', coupon: 'SPRING', seats: 3 },
        },
      }),
    ]);
    expect((await search('plan=pro')).map((r) => r.transaction_id)).toEqual(['in_1', 'in_2']);
    expect((await search('seats=3')).map((r) => r.transaction_id)).toEqual(['in_1']);
    expect(await search('plan=enterprise')).toEqual([]);
  });
});
