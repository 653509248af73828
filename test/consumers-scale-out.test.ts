// The production stack scaled out, every part its own process: the gateway publishing to Kafka (topics of
// this test's own, 6 partitions each; Redis for tokens and rate limits; the schema registry), analytics
// consumers and a revenue consumer landing into ClickHouse's HTTP interface over chDB. In one run, the
// group grows from one analytics consumer to two and three while records come (each start a rebalance),
// then one member is killed with SIGKILL mid-load. After each phase: every record answered 202 is stored
// exactly once, and the visits — the table every traffic figure reads — equal the fold of visits over the
// stored records from scratch, in every project: exact whatever member landed which record (issue 21).
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import { VISIT_RECORD_COLUMNS } from '@tally/reports/tables';
import { type VisitRecord, visitsOf } from '@tally/reports/traffic';
import { RedisTokenStore } from '@tally/tokens';
import { openClickHouseWarehouse, type Warehouse } from '@tally/warehouse';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  eventually,
  type GatewayProcess,
  spawnTallyService,
  startGatewayProcess,
  tempDataDir,
} from './support/processes.ts';
import { pipelineEnv } from './support/tally-process.ts';
import { kill, startWarehouseServer } from './support/warehouse-server.ts';

const PROJECTS = ['scale-a', 'scale-b', 'scale-c'];
const BURST = 'scale-burst';
const USER_AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
];

describe('analytics consumers scaled out on Kafka: exact with 1, 2 and 3 members and after kill -9', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let warehouseServer: Awaited<ReturnType<typeof startWarehouseServer>>;
  let warehouse: Warehouse;
  let gateway: GatewayProcess;
  let redis: Redis;
  /** The log as the consumers see it: their group's committed positions. */
  let log: RecordLog;
  const consumers: GatewayProcess[] = [];
  let revenue: GatewayProcess;
  const tokens = new Map<string, { pub: string; sec: string }>();
  /** Every record answered 202, by project. */
  const accepted = new Map<string, Set<string>>();
  let day = Date.UTC(2026, 10, 2);

  const startConsumer = async (service = 'analytics-consumer') =>
    spawnTallyService(
      `services/${service}/src/main.ts`,
      { ...process.env, TALLY_ENV_FILE: '/dev/null', ...env },
      90_000,
    );

  beforeAll(async () => {
    dataDir = tempDataDir();
    warehouseServer = await startWarehouseServer(`${dataDir}/warehouse`, 0);
    warehouse = await openClickHouseWarehouse({ url: warehouseServer.url, database: 'scale' });
    const redisPrefix = `test-scale-${randomUUID().slice(0, 8)}:`;
    env = pipelineEnv({
      TALLY_DATA_DIR: dataDir,
      CLICKHOUSE_URL: warehouseServer.url,
      CLICKHOUSE_DATABASE: 'scale',
      KAFKA_BROKERS: inject('kafkaBrokers'),
      SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
      KAFKA_TOPIC_PREFIX: `test-scale-${randomUUID().slice(0, 8)}.`,
      KAFKA_PARTITIONS: '6',
      REDIS_URL: inject('redisUrl'),
      REDIS_KEY_PREFIX: redisPrefix,
      CONSUMER_BATCH_WAIT_MS: '200',
      REVENUE_BATCH_WAIT_MS: '200',
      CONSUMER_BATCH_SIZE: '500',
      GATEWAY_WORKERS: '1',
    });
    redis = new Redis(inject('redisUrl'));
    const store = new RedisTokenStore(redis, redisPrefix);
    for (const project of [...PROJECTS, BURST]) {
      tokens.set(project, {
        pub: (await store.create(project, 'public')).token,
        sec: (await store.create(project, 'secret')).token,
      });
      accepted.set(project, new Set());
    }
    gateway = await startGatewayProcess(env);
    log = await openRecordLog(loadConfig({ TALLY_ENV_FILE: '/dev/null', ...env }), { checkSettings: false });
    consumers.push(await startConsumer());
    revenue = await startConsumer('revenue-consumer');
  }, 240_000);

  afterAll(async () => {
    for (const consumer of consumers) await consumer.stop('SIGKILL');
    await revenue?.stop('SIGKILL');
    await gateway?.stop();
    await log?.close();
    await warehouse?.close();
    if (warehouseServer) await kill(warehouseServer.process, 'SIGTERM');
    redis?.disconnect();
  });

  /** POSTs a record with a client-chosen id; remembers it when answered 202 (a 503 is sent again). */
  async function send(project: string, body: Record<string, unknown>, userAgent: string): Promise<void> {
    const id = randomUUID();
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await fetch(`${gateway.url}/api/ingest`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-token': (tokens.get(project) as { pub: string }).pub,
          'user-agent': userAgent,
        },
        body: JSON.stringify({ ...body, id }),
      });
      if (res.status === 202) {
        accepted.get(project)?.add(id);
        return;
      }
      expect(res.status, await res.text()).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the gateway did not accept the record');
  }

  /**
   * A day of traffic: in each project, visitors (named by the client, and derived by the gateway from
   * distinct User-Agents) with several sessions each, pageviews and custom events some minutes apart
   * (visits split where 30 minutes pass), the last session dated by arrival, sent in a shuffled order,
   * `concurrency` at a time.
   */
  async function sendTraffic(
    visitors: number,
    concurrency = 24,
    during?: () => Promise<void>,
  ): Promise<void> {
    const records: (() => Promise<void>)[] = [];
    day += 86_400_000;
    for (const project of PROJECTS) {
      for (let v = 0; v < visitors; v++) {
        const named = v % 4 !== 0;
        const userAgent = named
          ? (USER_AGENTS[v % USER_AGENTS.length] as string)
          : `${USER_AGENTS[0]} tally-test/${randomUUID()}`;
        // The same named visitors in every phase: their visits dated by arrival go on from phase to phase,
        // landed by the members that hold their partition in each (it may come back to one that held it).
        const visitor = named ? { visitor_fingerprint: `fp-${project}-${v}` } : {};
        for (let session = 0; session < 3; session++) {
          const sessionId = `s-${randomUUID()}`;
          const start = day + session * 3 * 3600_000 + v * 60_000;
          for (let r = 0; r < 4; r++) {
            // The last session's records are dated by their arrival, as a browser's tracker's are: one
            // visit of the visitor's, landed by whichever members hold it before and after the change.
            const timestamp =
              session === 2
                ? {}
                : { timestamp: start + r * 7 * 60_000 + (r === 3 && session === 1 ? 40 * 60_000 : 0) };
            const data =
              r === 2
                ? { session_id: sessionId, event_name: 'clicked', event_data: { n: String(r) }, ...visitor }
                : { session_id: sessionId, url: `https://${project}.example/p${r}`, ...visitor };
            records.push(() =>
              send(
                project,
                { type: r === 2 ? 'event' : 'pageview', data: { ...data, ...timestamp } },
                userAgent,
              ),
            );
          }
        }
      }
    }
    for (let i = records.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [records[i], records[j]] = [records[j] as () => Promise<void>, records[i] as () => Promise<void>];
    }
    // Half the records, then what happens meanwhile (a member joins or dies) while they are landing, then
    // the rest.
    const midway = Math.floor(records.length / 2);
    const sendAll = async (list: (() => Promise<void>)[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < list.length) await (list[next++] as () => Promise<void>)();
        }),
      );
    };
    await sendAll(records.slice(0, midway));
    await during?.();
    await sendAll(records.slice(midway));
  }

  /** Waits until every record answered 202 is stored, then checks each is stored once and the visits. */
  async function expectExact(): Promise<void> {
    const projects = [...accepted.keys()];
    const expected = projects.reduce((n, p) => n + (accepted.get(p)?.size ?? 0), 0);
    await eventually(180_000, `all ${expected} accepted records landed`, async () => {
      const [row] = await warehouse.query<{ n: number }>(
        'SELECT count() AS n FROM events FINAL WHERE project_id IN {projects:Array(String)}',
        { projects },
      );
      return Number(row?.n) >= expected;
    });
    // A consumer commits a batch only once its records and the visits they change are stored: with every
    // record committed, the visits are final, and are checked once, not waited for.
    await eventually(180_000, 'the analytics group committed every record', async () => {
      const backlog = (await log.backlog?.({ oldest: false })) ?? [];
      const analytics = backlog.filter((b) => b.group === 'analytics');
      return analytics.length > 0 && analytics.every((b) => b.lag === 0);
    });
    for (const project of projects) {
      const ids = await warehouse.query<{ id: string; copies: number }>(
        'SELECT id, count() AS copies FROM events FINAL WHERE project_id = {project:String} GROUP BY id',
        { project },
      );
      expect(ids.length, project).toBe(accepted.get(project)?.size);
      expect(
        ids.filter((r) => Number(r.copies) !== 1),
        project,
      ).toEqual([]);
      expect(new Set(ids.map((r) => r.id)), project).toEqual(accepted.get(project));
      // The visits table equals the fold of visits over the stored records, from scratch.
      const records = await warehouse.query<VisitRecord>(
        `SELECT ${VISIT_RECORD_COLUMNS} FROM (SELECT * FROM events FINAL
           WHERE project_id = {project:String} AND type IN ('pageview', 'event') AND NOT is_bot)`,
        { project },
      );
      const reference = visitsOf(records.map((r) => ({ ...r, timestamp: Number(r.timestamp) }))).map((v) => ({
        visitor_id: v.visitor_id,
        start: v.start,
        end: v.end,
        pageviews: v.pageviews,
        events: v.events,
        ids: [...v.pageview_ids, ...v.event_ids].sort(),
      }));
      {
        const stored = await warehouse.query<{
          visitor_id: string;
          start: number;
          end: number;
          pageviews: number;
          events: number;
          ids: string[];
        }>(
          `SELECT visitor_id, toUnixTimestamp64Milli(start) AS start, toUnixTimestamp64Milli(end) AS end,
             pageviews, events, arraySort(arrayConcat(pageview_ids, event_ids)) AS ids
           FROM visits FINAL WHERE project_id = {project:String}`,
          { project },
        );
        const key = (v: { visitor_id: string; start: number }) => `${v.visitor_id}:${v.start}`;
        const sort = <T extends { visitor_id: string; start: number }>(list: T[]) =>
          [...list].sort((a, b) => (key(a) < key(b) ? -1 : 1));
        const normal = sort(
          stored.map((v) => ({
            ...v,
            start: Number(v.start),
            end: Number(v.end),
            pageviews: Number(v.pageviews),
            events: Number(v.events),
          })),
        );
        expect(normal, `the visits of ${project} equal to the fold of its records`).toEqual(sort(reference));
      }
    }
  }

  it('lands a burst of 2,000 records of one project, and visits exact, with one consumer', async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < 2000) {
          const i = next++;
          await send(
            BURST,
            {
              type: 'pageview',
              data: {
                timestamp: day + (i % 500) * 60_000,
                session_id: `b-${i % 300}`,
                visitor_fingerprint: `burst-${i % 300}`,
                url: `https://b.example/${i % 7}`,
              },
            },
            USER_AGENTS[1] as string,
          );
        }
      }),
    );
    await sendTraffic(12);
    await expectExact();
  }, 300_000);

  it('stays exact as a second and a third consumer join while records come', async () => {
    await sendTraffic(12, 24, async () => {
      consumers.push(await startConsumer());
    });
    await expectExact();
    await sendTraffic(12, 24, async () => {
      consumers.push(await startConsumer());
    });
    await expectExact();
  }, 400_000);

  it('stays exact when a member is killed with SIGKILL mid-load', async () => {
    await sendTraffic(16, 24, async () => {
      await (consumers.shift() as GatewayProcess).stop('SIGKILL');
    });
    await expectExact();
  }, 400_000);
});
