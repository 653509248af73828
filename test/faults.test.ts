// Fault tests: break a part of the running pipeline on purpose under a bounded load of records whose ids
// the client chose, and check after recovery that every record answered 202 is in the warehouse exactly
// once. (The gateway and a consumer killed with SIGKILL mid-load, on the embedded log and on Kafka, are
// test/pipeline-crash.test.ts and test/durability.test.ts.) Everything runs on 127.0.0.1.
import { randomUUID } from 'node:crypto';
import { FileTokenStore } from '@tally/tokens';
import { openClickHouseWarehouse, type Warehouse } from '@tally/warehouse';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ownBroker } from './support/kafka.ts';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import {
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
  type TallyProcess,
} from './support/tally-process.ts';
import { kill, startWarehouseServer } from './support/warehouse-server.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface Outcome {
  id: string;
  status: number;
  startedAt: number;
  endedAt: number;
}

/** A client's pause after a refusal before it sends again (the SDKs back off; this is a short one). */
const BACKOFF_MS = 20;

/**
 * A bounded load of pageviews from `workers` clients until `stop()` is called or `max` requests were sent.
 * Like a real client, a worker pauses after a refusal: a gateway whose log is away answers 503 at once
 * (the Kafka log's circuit), and a client sending again at once would spend the whole budget in the outage.
 */
function pageviewLoad(url: string, token: string, workers = 4, max = 20_000) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  const run = async (worker: number) => {
    while (!stopped && outcomes.length < max) {
      const id = randomUUID();
      const startedAt = Date.now();
      let status = 0;
      try {
        status = (
          await send(url, token, {
            type: 'pageview',
            id,
            data: {
              visitor_fingerprint: `v${worker}`,
              session_id: `s${worker}`,
              url: `https://shop.example/${id}`,
            },
          })
        ).status;
      } catch {
        status = 0; // connection refused or reset: not acknowledged
      }
      outcomes.push({ id, status, startedAt, endedAt: Date.now() });
      if (status !== 202) await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS));
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, i) => run(i)));
  return {
    outcomes,
    acknowledged: () => outcomes.filter((o) => o.status === 202).map((o) => o.id),
    async stop() {
      stopped = true;
      await done;
    },
  };
}

async function waitForAcks(load: ReturnType<typeof pageviewLoad>, count: number, what: string) {
  await eventually(120_000, what, async () => load.acknowledged().length >= count);
}

/** Waits until every id is in `events` (as analysts read it, FINAL) and returns how often each appears. */
async function landedCopies(
  warehouse: Warehouse,
  project: string,
  ids: string[],
): Promise<Map<string, number>> {
  let copies = new Map<string, number>();
  await eventually(120_000, `${ids.length} acknowledged records landing`, async () => {
    const rows = await warehouse.query<{ id: string; copies: number }>(
      'SELECT id, count() AS copies FROM events FINAL WHERE project_id = {p:String} GROUP BY id',
      { p: project },
    );
    copies = new Map(rows.map((r) => [r.id, Number(r.copies)]));
    return ids.every((id) => copies.has(id));
  }).catch((error: Error) => {
    throw new Error(`${error.message} (${ids.filter((id) => copies.has(id)).length} landed)`);
  });
  return copies;
}

async function projectToken(dataDir: string, project: string, kind: 'public' | 'secret' = 'public') {
  const store = new FileTokenStore(dataDir);
  const { token } = await store.create(project, kind);
  await store.close();
  return token;
}

describe('the Kafka broker stopped for ten seconds mid-load', () => {
  it('answers 503 (never 202) while it is down and lands every acknowledged record exactly once after', async () => {
    const broker = await ownBroker();
    cleanups.push(() => broker.remove());
    const dataDir = tempDataDir();
    const token = await projectToken(dataDir, 'broker-outage');
    const running = await startTallyProcess({
      TALLY_DATA_DIR: dataDir,
      KAFKA_BROKERS: broker.brokers,
      SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
      KAFKA_TOPIC_PREFIX: `test-${randomUUID().slice(0, 8)}.`,
      APPEND_TIMEOUT_MS: '1500',
    });
    cleanups.push(() => running.stop('SIGKILL'));

    const load = pageviewLoad(running.url, token);
    await waitForAcks(load, 200, '200 records acknowledged before the outage');
    await broker.stop();
    const downSince = Date.now();
    await eventually(
      20_000,
      'ten seconds of outage under load',
      async () => Date.now() - downSince >= 10_000,
    );
    const downUntil = Date.now();
    await broker.start();
    const before = load.acknowledged().length;
    await waitForAcks(load, before + 200, '200 more records acknowledged after the restart').catch(
      (error: Error) => {
        const lines = running.output().split('\n');
        const statuses = load.outcomes.slice(-20).map((o) => o.status);
        throw new Error(
          `${error.message}; last statuses ${statuses}; output:\n${lines.slice(-40).join('\n')}`,
        );
      },
    );
    await load.stop();

    // Requests made entirely while the broker was down were refused, never acknowledged.
    const duringOutage = load.outcomes.filter((o) => o.startedAt >= downSince && o.endedAt <= downUntil);
    expect(duringOutage.length).toBeGreaterThan(0);
    expect(duringOutage.filter((o) => o.status === 202)).toEqual([]);
    expect(new Set(duringOutage.map((o) => o.status))).toEqual(new Set([503]));

    const warehouse = await publishedWarehouse(dataDir);
    cleanups.push(() => warehouse.close());
    const acknowledged = load.acknowledged();
    const copies = await landedCopies(warehouse, 'broker-outage', acknowledged).catch(
      async (error: Error) => {
        // Where each missing record is: when it was acknowledged against the outage, whether the consumer
        // marked it stored (record_ids) or stored a row FINAL does not show; then what the process said (its
        // warnings: failed sends and commits, a consumer stopping), without the gateway's expected refusals.
        const landed = await warehouse.query<{ id: string }>(
          'SELECT DISTINCT toString(id) AS id FROM events WHERE project_id = {p:String}',
          { p: 'broker-outage' },
        );
        const rows = new Set(landed.map((r) => r.id));
        const marked = await warehouse.query<{ id: string }>(
          'SELECT DISTINCT toString(id) AS id FROM record_ids WHERE project_id = {p:String}',
          { p: 'broker-outage' },
        );
        const ids = new Set(marked.map((r) => r.id));
        const missing = load.outcomes
          .filter((o) => o.status === 202 && !rows.has(o.id))
          .map((o) => ({
            ackedMsAfterOutageStart: o.endedAt - downSince,
            outageMs: downUntil - downSince,
            inRecordIds: ids.has(o.id),
          }));
        const lines = running
          .output()
          .split('\n')
          .filter((line) => !line.includes('"service":"gateway"'));
        throw new Error(
          `${error.message}; missing: ${JSON.stringify(missing)}; the process's output:\n${lines.join('\n').slice(-12000)}`,
        );
      },
    );
    expect(acknowledged.filter((id) => copies.get(id) !== 1)).toEqual([]);
  }, 300_000);
});

describe('the warehouse unreachable for a while', () => {
  it('keeps accepting, waits, resumes, and skips nothing', async () => {
    const warehouseDir = tempDataDir();
    const port = 18_500 + Math.floor(Math.random() * 400);
    let server = await startWarehouseServer(warehouseDir, port);
    cleanups.push(() => kill(server.process));
    const dataDir = tempDataDir();
    const token = await projectToken(dataDir, 'warehouse-outage');
    const running: TallyProcess = await startTallyProcess({
      TALLY_DATA_DIR: dataDir,
      CLICKHOUSE_URL: server.url,
      CONSUMER_BATCH_SIZE: '50',
    });
    cleanups.push(() => running.stop('SIGKILL'));
    const warehouse = await openClickHouseWarehouse({ url: server.url, database: 'tally' });
    cleanups.push(() => warehouse.close());

    const load = pageviewLoad(running.url, token);
    await waitForAcks(load, 200, '200 records acknowledged before the outage');
    await landedCopies(warehouse, 'warehouse-outage', load.acknowledged().slice(0, 50));
    await kill(server.process);
    // The record log is local: the gateway goes on acknowledging while the consumer cannot insert.
    const before = load.acknowledged().length;
    await waitForAcks(load, before + 300, '300 records acknowledged during the outage');
    await eventually(30_000, 'the consumer noticing the outage', async () =>
      /warehouse operation failed; retrying|retry/i.test(running.output()),
    );
    server = await startWarehouseServer(warehouseDir, port);
    await waitForAcks(load, load.acknowledged().length + 100, '100 more records acknowledged after');
    await load.stop();
    expect(running.process.exitCode).toBe(null); // the consumer waited; the process did not give up

    const acknowledged = load.acknowledged();
    const copies = await landedCopies(warehouse, 'warehouse-outage', acknowledged);
    expect(acknowledged.filter((id) => copies.get(id) !== 1)).toEqual([]);
  });
});

describe('revenue records sent several times under load', () => {
  it('counts each transaction once', async () => {
    const dataDir = tempDataDir();
    const token = await projectToken(dataDir, 'revenue-dupes', 'secret');
    const running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    cleanups.push(() => running.stop('SIGKILL'));

    const TRANSACTIONS = 60;
    const records = Array.from({ length: TRANSACTIONS }, (_, i) => ({
      id: randomUUID(),
      data: {
        visitor_fingerprint: 'v',
        session_id: 's',
        customer_id: `cus_${i % 7}`,
        amount: i + 1,
        transaction_id: `in_${i}`,
        event_type: 'purchase',
        timestamp: Date.UTC(2026, 2, 1 + (i % 28)),
      },
    }));
    // Each transaction three times: twice with the same record id (an SDK retry), once with a new one
    // (a webhook redelivery), all shuffled across concurrent clients.
    const sends = records.flatMap((r) => [r, r, { ...r, id: randomUUID() }]).sort(() => Math.random() - 0.5);
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < sends.length) {
          const r = sends[next++] as (typeof sends)[number];
          statuses.push((await send(running.url, token, { type: 'revenue', ...r })).status);
        }
      }),
    );
    expect(statuses.filter((s) => s !== 202)).toEqual([]);

    // A sentinel sent last is stored only after everything before it on the (single, ordered) log.
    const sentinel = `sentinel-${randomUUID()}`;
    await send(running.url, token, {
      type: 'revenue',
      data: {
        visitor_fingerprint: 'v',
        session_id: 's',
        customer_id: 'z',
        amount: 1,
        transaction_id: sentinel,
      },
    });
    const warehouse = await publishedWarehouse(dataDir);
    cleanups.push(() => warehouse.close());
    await eventually(60_000, 'the sentinel landing', async () => {
      const rows = await warehouse.query('SELECT 1 FROM revenue_records WHERE transaction_id = {t:String}', {
        t: sentinel,
      });
      return rows.length === 1;
    });
    const [stored] = await warehouse.query<{ n: number; total: number }>(
      "SELECT count() AS n, sum(amount) AS total FROM revenue_records WHERE project_id = 'revenue-dupes' AND transaction_id != {t:String}",
      { t: sentinel },
    );
    expect(Number(stored?.n)).toBe(TRANSACTIONS);
    expect(Number(stored?.total)).toBe((TRANSACTIONS * (TRANSACTIONS + 1)) / 2);

    const report = JSON.parse(
      await tally(
        ['report', 'mrr', '--project', 'revenue-dupes', '--from', '2026-03', '--to', '2026-03', '--json'],
        pipelineEnv({ TALLY_DATA_DIR: dataDir }),
      ),
    ) as Array<{ cash_revenue: string }>;
    // Money is exact decimal text; the sentinel is in November.
    expect(report[0]?.cash_revenue).toBe(String((TRANSACTIONS * (TRANSACTIONS + 1)) / 2));
  });
});
