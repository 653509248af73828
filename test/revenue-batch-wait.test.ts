// The revenue consumer waits REVENUE_BATCH_WAIT_MS, not CONSUMER_BATCH_WAIT_MS, before it lands a batch
// that does not fill: in `npm start`'s process and as a process of its own (the embedded log, the
// warehouse through ClickHouse's HTTP interface over chDB). A revenue record sent alone lands no earlier
// than its wait after it was sent, while a pageview sent with it, under the analytics consumer's 50 ms,
// lands first.
import { randomUUID } from 'node:crypto';
import { FileTokenStore } from '@tally/tokens';
import { openClickHouseWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GatewayProcess,
  startConsumerProcess,
  startGatewayProcess,
  tempDataDir,
} from './support/processes.ts';
import { pipelineEnv, publishedWarehouse, send, startTallyProcess } from './support/tally-process.ts';
import { kill, startWarehouseServer } from './support/warehouse-server.ts';

const PROJECT = 'batch-wait';
const REVENUE_WAIT_MS = 4000;

const settings = {
  CONSUMER_BATCH_WAIT_MS: '50',
  REVENUE_BATCH_WAIT_MS: String(REVENUE_WAIT_MS),
};

/** Sends a pageview and a revenue record together; resolves to when each was first seen stored, from the send. */
async function landingTimes(gatewayUrl: string, token: string, warehouse: Warehouse) {
  const transaction = `t-${randomUUID()}`;
  const sentAt = Date.now();
  const [pageview, revenue] = await Promise.all([
    send(gatewayUrl, token, {
      type: 'pageview',
      data: { session_id: 's', visitor_fingerprint: 'v', url: 'https://wait.example/' },
    }),
    send(gatewayUrl, token, {
      type: 'revenue',
      data: {
        session_id: 's',
        visitor_fingerprint: 'v',
        customer_id: 'c',
        amount: 10,
        transaction_id: transaction,
      },
    }),
  ]);
  expect(pageview.status, await pageview.text()).toBe(202);
  expect(revenue.status, await revenue.text()).toBe(202);
  let pageviewMs: number | null = null;
  let revenueMs: number | null = null;
  while (revenueMs === null || pageviewMs === null) {
    if (Date.now() - sentAt > 60_000) {
      throw new Error(`not landed in 60 s: pageview ${pageviewMs}, revenue ${revenueMs}`);
    }
    const [row] = await warehouse.query<{ pageviews: number; revenue: number }>(
      `SELECT (SELECT count() FROM events WHERE project_id = {p:String} AND type = 'pageview') AS pageviews,
              (SELECT count() FROM revenue WHERE project_id = {p:String} AND transaction_id = {t:String}) AS revenue`,
      { p: PROJECT, t: transaction },
    );
    // Taken after the answer: a record seen was stored before it, so this is never early.
    const elapsed = Date.now() - sentAt;
    if (pageviewMs === null && Number(row?.pageviews) > 0) pageviewMs = elapsed;
    if (revenueMs === null && Number(row?.revenue) > 0) revenueMs = elapsed;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { pageviewMs, revenueMs };
}

async function secretToken(dataDir: string): Promise<string> {
  const store = new FileTokenStore(dataDir);
  const { token } = await store.create(PROJECT, 'secret');
  await store.close();
  return token;
}

describe("npm start's process", () => {
  let dataDir: string;
  let running: Awaited<ReturnType<typeof startTallyProcess>>;
  let warehouse: Warehouse;
  let token: string;

  beforeAll(async () => {
    dataDir = tempDataDir();
    token = await secretToken(dataDir);
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir, ...settings });
    warehouse = await publishedWarehouse(dataDir);
  });
  afterAll(async () => {
    await warehouse?.close();
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  it('lands revenue after REVENUE_BATCH_WAIT_MS, pageviews after CONSUMER_BATCH_WAIT_MS', async () => {
    const { pageviewMs, revenueMs } = await landingTimes(running.url, token, warehouse);
    expect(revenueMs).toBeGreaterThanOrEqual(REVENUE_WAIT_MS);
    expect(pageviewMs).toBeLessThan(revenueMs);
  });
});

describe('the revenue consumer as its own process', () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startWarehouseServer>>;
  let gateway: GatewayProcess;
  let analytics: GatewayProcess;
  let revenue: GatewayProcess;
  let warehouse: Warehouse;
  let token: string;

  beforeAll(async () => {
    dataDir = tempDataDir();
    server = await startWarehouseServer(`${dataDir}/warehouse`, 0);
    const env = pipelineEnv({ TALLY_DATA_DIR: dataDir, CLICKHOUSE_URL: server.url, ...settings });
    token = await secretToken(dataDir);
    gateway = await startGatewayProcess(env);
    analytics = await startConsumerProcess('analytics-consumer', env);
    revenue = await startConsumerProcess('revenue-consumer', env);
    warehouse = await openClickHouseWarehouse({ url: server.url, database: 'tally' });
  });
  afterAll(async () => {
    await warehouse?.close();
    await revenue?.stop();
    await analytics?.stop();
    await gateway?.stop();
    if (server) await kill(server.process, 'SIGTERM');
  });

  it('lands revenue after REVENUE_BATCH_WAIT_MS, pageviews after CONSUMER_BATCH_WAIT_MS', async () => {
    const { pageviewMs, revenueMs } = await landingTimes(gateway.url, token, warehouse);
    expect(revenueMs).toBeGreaterThanOrEqual(REVENUE_WAIT_MS);
    expect(pageviewMs).toBeLessThan(revenueMs);
  });
});
