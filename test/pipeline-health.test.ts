// Ingestion health with every part its own process, on the embedded log and on Kafka: the gateway, the
// analytics consumer, the warehouse (ClickHouse's HTTP interface over chDB) and the dashboard, which has
// no log handed over and reads the configured one itself. The consumer is stopped: the lag and the age
// of the oldest record not landed grow; it is started again: they fall back to nothing. Refusals of each
// kind whose project the gateway knows reach the project's counts per status (a 401 does not), and a dead
// letter of the project is listed.
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@tally/config';
import { deadLetterId, openRecordLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  type GatewayProcess,
  spawnTallyService,
  startGatewayProcess,
  tempDataDir,
} from './support/processes.ts';
import { BROWSER, pipelineBackends, pipelineEnv, send } from './support/tally-process.ts';
import { kill, startWarehouseServer } from './support/warehouse-server.ts';

const PROJECT = 'health-e2e';
const RATE_LIMIT = 30;
const BODY_LIMIT = 4096;

interface HealthBody {
  types: Array<{ type: string; landed_last_hour: number }>;
  consumer_groups: Array<{
    group: string;
    topic: string;
    lag: number;
    oldest_age_seconds: number | null;
  }> | null;
  oldest_not_landed: { group: string; topic: string; age_seconds: number } | null;
  dead_letters: {
    count: number;
    by_reason: Array<{ type: string; error_code: string; count: number }>;
  } | null;
  refused: { by_status: Array<{ status: number; count: number }>; total: number } | null;
  unavailable: string[];
}

describe.each(
  pipelineBackends({ partitions: 1 }),
)('ingestion health with a dashboard of its own, on %s', (_name, backendEnv) => {
  let dataDir: string;
  let env: Record<string, string>;
  let warehouse: Awaited<ReturnType<typeof startWarehouseServer>>;
  let gateway: GatewayProcess;
  let consumer: GatewayProcess | null = null;
  let dashboard: GatewayProcess;
  let publicToken: string;
  let secretToken: string;
  let readKey: string;
  let sent = 0;

  const pageview = () => ({
    type: 'pageview',
    id: randomUUID(),
    data: { session_id: `s-${randomUUID()}`, url: 'https://health.example/' },
  });
  const accept = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const res = await send(gateway.url, publicToken, pageview());
      expect(res.status, await res.clone().text()).toBe(202);
      sent++;
    }
  };
  const health = async (): Promise<HealthBody> => {
    const res = await fetch(`${dashboard.url}/api/v1/projects/${PROJECT}/health`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as HealthBody;
  };
  const pageviewLag = (h: HealthBody) =>
    h.consumer_groups?.find((g) => g.group === 'analytics' && g.topic === 'pageview');
  const childEnv = () => {
    const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
    return { ...inherited, ...env };
  };
  const startConsumer = async () => {
    consumer = await spawnTallyService('services/analytics-consumer/src/main.ts', childEnv(), 60_000);
  };

  beforeAll(async () => {
    dataDir = tempDataDir();
    warehouse = await startWarehouseServer(`${dataDir}/warehouse`, 0);
    env = pipelineEnv({
      TALLY_DATA_DIR: dataDir,
      CLICKHOUSE_URL: warehouse.url,
      RATE_LIMIT_PER_HOUR: String(RATE_LIMIT),
      BODY_LIMIT: String(BODY_LIMIT),
      REFUSAL_FLUSH_MS: '200',
      ...backendEnv(),
    });
    const store = new FileTokenStore(dataDir);
    publicToken = (await store.create(PROJECT, 'public')).token;
    secretToken = (await store.create(PROJECT, 'secret')).token;
    readKey = (await store.create(PROJECT, 'read')).token;
    await store.setAllowedOrigins(PROJECT, ['https://health.example']);
    gateway = await startGatewayProcess(env);
    await startConsumer();
    dashboard = await spawnTallyService('services/dashboard/src/main.ts', childEnv(), 60_000);
  });

  afterAll(async () => {
    await dashboard?.stop();
    await consumer?.stop();
    await gateway?.stop();
    if (warehouse) await kill(warehouse.process, 'SIGTERM');
  });

  it('tells the lag and the oldest record not landed, growing while the consumer is stopped', async () => {
    await accept(3);
    await eventually(30_000, 'the first pageviews landing', async () => {
      const h = await health();
      return h.types.find((t) => t.type === 'pageview')?.landed_last_hour === 3 && pageviewLag(h)?.lag === 0;
    });
    const caughtUp = await health();
    expect(caughtUp.oldest_not_landed).toBeNull();
    expect(caughtUp.unavailable).toEqual([]);

    await consumer?.stop();
    consumer = null;
    await accept(2);
    const first = await health();
    expect(pageviewLag(first)?.lag).toBe(2);
    expect(first.oldest_not_landed).toMatchObject({ group: 'analytics', topic: 'pageview' });
    const firstAge = first.oldest_not_landed?.age_seconds ?? -1;
    expect(firstAge).toBeGreaterThanOrEqual(0);
    await eventually(15_000, 'the oldest record not landed growing older', async () => {
      const h = await health();
      return pageviewLag(h)?.lag === 2 && (h.oldest_not_landed?.age_seconds ?? 0) >= firstAge + 2;
    });
    expect(pageviewLag(await health())?.oldest_age_seconds).toBeGreaterThanOrEqual(firstAge + 2);

    await startConsumer();
    await eventually(30_000, 'the lag falling back to nothing', async () => {
      const h = await health();
      return pageviewLag(h)?.lag === 0 && h.oldest_not_landed === null;
    });
    const after = await health();
    expect(after.types.find((t) => t.type === 'pageview')?.landed_last_hour).toBe(5);
  });

  it("counts the gateway's refusals per status for the project, and lists its dead letters", async () => {
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${gateway.url}/api/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': BROWSER, ...headers },
        body,
      });
    const statuses: number[] = [];
    const refuse = async (body: unknown, headers: Record<string, string> = {}) => {
      const res = await post(typeof body === 'string' ? body : JSON.stringify(body), headers);
      statuses.push(res.status);
    };
    const pv = pageview();
    await refuse({ ...pv, token: publicToken, data: { url: 42 } }); // 400 (validation)
    await refuse(pv, { 'x-api-token': publicToken, origin: 'https://elsewhere.example' }); // 403 origin
    await refuse({ type: 'revenue', data: {} }, { 'x-api-token': publicToken }); // 403 secret token
    await refuse(`{"pad":"${'x'.repeat(BODY_LIMIT)}"}`, { 'x-api-token': secretToken }); // 413
    await refuse(pv, { 'x-api-token': 'pub_unknown' }); // 401: no project
    await refuse(pv); // 401: no token
    // Up to the rate limit (per address and hour, every request counted), then two 429s.
    while (sent + statuses.length < RATE_LIMIT) await accept(1);
    await refuse(pv, { 'x-api-token': publicToken });
    await refuse(pv, { 'x-api-token': publicToken });
    expect(statuses).toEqual([400, 403, 403, 413, 401, 401, 429, 429]);

    // A record of the project the consumer could not land, set aside (as the consumers would).
    const config = loadConfig(env);
    const log = await openRecordLog(config);
    const position = { topic: 'pageview' as const, partition: 0, offset: 1_000_000 };
    await log.deadLetters.add([
      {
        ...position,
        id: deadLetterId('analytics', position),
        group: 'analytics',
        failed_at: Date.now(),
        error: 'refused by the test',
        error_code: 'contract',
        record: testRecord('pageview', { project_id: PROJECT }),
      },
    ]);
    await log.close();

    let last: HealthBody | null = null;
    await eventually(30_000, 'the refusals and the dead letter reaching the dashboard', async () => {
      last = await health();
      return last.refused?.total === 6 && last.dead_letters?.count === 1;
    }).catch((error) => {
      throw new Error(
        `${(error as Error).message}: ${JSON.stringify(last?.refused)} ${JSON.stringify(last?.dead_letters)}`,
      );
    });
    const h = await health();
    expect(h.refused?.by_status).toEqual([
      { status: 400, count: 1 },
      { status: 403, count: 2 },
      { status: 413, count: 1 },
      { status: 429, count: 2 },
    ]);
    expect(h.dead_letters?.by_reason).toEqual([{ type: 'pageview', error_code: 'contract', count: 1 }]);
    expect(h.unavailable).toEqual([]);
  });
});
