// End-to-end benchmark (`npm run bench:e2e`): records from HTTP to rows in ClickHouse, through `npm start`'s
// all-in-one process (gateway, record log, both consumers, embedded chDB), read back through the warehouse
// endpoint that process publishes (as `tally sql` does). For each backend (embedded defaults: LMDB log; and
// kafka: Kafka log + Redis, chDB warehouse), with the configuration's defaults (CONSUMER_BATCH_SIZE 20000,
// CONSUMER_BATCH_WAIT_MS 500, REVENUE_BATCH_WAIT_MS 2000) unless set in the environment:
//   1. throughput: the realistic mix at full speed for `--duration` s (separate process: by default
//      `--load clients`, 256 clients that wait Retry-After on a 503 and send the same record again, as the
//      SDKs do, bench/lib/retrying-clients.ts; `--load max`, autocannon, which sends again at once), while
//      the rows in events, identities and revenue are counted every second, beside the gateway's 202s (its
//      metrics), whose difference is the consumers' lag; then until every accepted record has landed.
//      `--duration 300` is issue 27's five sustained minutes (the peak RSS is over the whole run). Sustained end-to-end rate = rows landed / (last row landed − first request).
//   2. freshness: marker pageviews at `--marker-rate` per second with known ids, alone and on top of a
//      background load at `--freshness-load`% of the sustained rate (open loop, separate process); the
//      warehouse is polled every `--poll-ms` for them. Freshness = first seen − 202 received.
// Prints one JSON object on stdout; progress on stderr.
//
//   node --conditions=@tally/source --import tsx bench/e2e.ts [--backends embedded,kafka] [--duration 20] [--connections 256]
//     [--freshness-duration 15] [--freshness-load 50] [--marker-rate 20] [--poll-ms 100]
//     [--drain-timeout 120] [--cpu-prof <dir>] [--load clients|max] [--client-ips 1000] [--requests-per-ip 0]
//   --requests-per-ip N: each client IP sends N requests, then leaves for a new one, --client-ips of them
//   sending at a time (visitors that come and go);
//   0 keeps each request template's IP, so the same few thousand visitors send for the whole run and
//   their visits grow with it.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { openClickHouseWarehouse, type Warehouse } from '@tally/warehouse';
import { endpointUrl, readPublishedEndpoint } from '@tally/warehouse-http';
import { Monitor, onInterrupt, sleep, stopAll } from './lib/children.ts';
import { percentiles } from './lib/fixed-rate.ts';
import { startLoad } from './lib/load.ts';
import { type LoadSnapshot, loadSnapshot, machineInfo } from './lib/machine.ts';
import { atLeast, atMost, cpuBound, type NotMeasured, parseArgs, type TargetCheck } from './lib/report.ts';
import {
  createTokens,
  removeDir,
  removeRunState,
  runBackends,
  type ServerProcess,
  type Services,
  startTallyServer,
  tempDir,
} from './lib/stack.ts';
import { buildTemplates, DEFAULT_MIX, type ProjectTokens } from './lib/workload.ts';

const options = parseArgs(
  {
    backends: 'embedded,kafka',
    duration: 20,
    connections: 256,
    freshnessDuration: 15,
    freshnessLoad: 50,
    markerRate: 20,
    pollMs: 100,
    drainTimeout: 120,
    clientIps: 1000,
    requestsPerIp: 0,
    load: 'clients',
    projects: 8,
    cpuProf: '',
  },
  process.argv.slice(2),
);
const TARGETS = { eventsPerSecond: 20_000, freshnessP95Ms: 2000 };
const log = (message: string) => process.stderr.write(`[bench:e2e] ${message}\n`);

/** Rows landed so far, over the three tables the consumers write. */
async function countRows(warehouse: Warehouse): Promise<number> {
  const [row] = await warehouse.query<{ n: number }>(
    'SELECT (SELECT count() FROM events) + (SELECT count() FROM identities) + (SELECT count() FROM revenue) AS n',
  );
  return Number(row?.n ?? 0);
}

/** Requests the gateway has answered 202 so far (tally_ingest_requests_total on its admin port). */
async function acknowledged(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.adminUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('tally_ingest_requests_total{') && line.includes('status="202"')) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}

async function openPublishedWarehouse(dataDir: string): Promise<Warehouse> {
  const endpoint = readPublishedEndpoint(dataDir);
  if (!endpoint) throw new Error(`the tally process published no warehouse endpoint in ${dataDir}`);
  return openClickHouseWarehouse({ url: endpointUrl(endpoint), database: 'tally' });
}

interface ThroughputResult {
  /** When the load started (Unix-epoch ms). */
  startedAt: number;
  durationS: number;
  /** Requests answered 202 per second at the gateway while the load ran. */
  ingestRps: number;
  accepted: number;
  statuses: Record<string, number>;
  /** Rows in the warehouse at the end of the run (≥ accepted: requests in flight when the generator stopped). */
  rowsLanded: number;
  /** Rows landed per second while the load ran, from its 5th second to its end (consumers' steady pace). */
  landingRateDuringLoad: number;
  /** Records accepted but not yet in the warehouse when the load stopped. */
  backlogAtEndOfLoad: number;
  /** From the end of the load until the last row landed, in s. */
  drainS: number;
  /** Rows landed / (last row landed − first request), per second. */
  sustainedEventsPerSecond: number;
  /** Rows counted every second: [seconds since the load started, rows]. */
  curve: Array<[number, number]>;
  /**
   * Records acknowledged (the gateway's 202s, from its metrics) but not yet in the warehouse, sampled every
   * second while the load ran and drained: the consumers' lag, and its largest value.
   */
  lag: { max: number; atEndOfLoad: number; curve: Array<[number, number]> };
  cpu: ReturnType<Monitor['window']>;
  limitedBy: string;
}

async function throughputPhase(
  monitor: Monitor,
  server: ServerProcess,
  warehouse: Warehouse,
  tokens: ProjectTokens[],
): Promise<ThroughputResult> {
  const before = await countRows(warehouse);
  const acknowledgedBefore = await acknowledged(server);
  const templates = buildTemplates({ tokens, clientIps: options.clientIps, seed: 20 });
  const started = Date.now();
  const curve: Array<[number, number]> = [];
  const lagCurve: Array<[number, number]> = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const t = Date.now();
      const acked = (await acknowledged(server)) - acknowledgedBefore;
      const n = (await countRows(warehouse)) - before;
      const at = Math.round((t - started) / 100) / 10;
      curve.push([at, n]);
      lagCurve.push([at, Math.max(0, acked - n)]);
      await sleep(Math.max(0, 1000 - (Date.now() - t)));
    }
  })();
  const load = startLoad({
    mode: options.load === 'max' ? 'max' : 'clients',
    url: server.url,
    path: '/api/ingest',
    connections: options.connections,
    warmupS: 0,
    durationS: options.duration,
    templates,
    requestsPerIp: Number(options.requestsPerIp),
    activeIps: Number(options.clientIps),
  });
  monitor.watch('load generator', load.child.pid);
  let result: Awaited<typeof load.result>;
  try {
    result = await load.result;
  } finally {
    monitor.unwatch('load generator');
  }
  const loadEnded = Date.now();
  const accepted = Object.entries(result.statuses)
    .filter(([code]) => code.startsWith('2'))
    .reduce((a, [, n]) => a + n, 0);
  log(
    `load: ${result.acceptedRps} accepted/s for ${result.durationS} s (${JSON.stringify(result.statuses)})`,
  );

  // Until every accepted record has landed and the count stops moving (bounded by --drain-timeout).
  const deadline = loadEnded + options.drainTimeout * 1000;
  let last = { n: -1, t: 0 };
  while (Date.now() < deadline) {
    await sleep(500);
    const point = curve.at(-1);
    if (point && point[1] >= accepted) {
      if (point[1] === last.n && Date.now() - last.t > 2500) break;
      if (point[1] !== last.n) last = { n: point[1], t: started + point[0] * 1000 };
    }
  }
  polling = false;
  await poller;
  const rows = curve.at(-1)?.[1] ?? 0;
  const firstFull = curve.find(([, n]) => n >= rows);
  const lastLandedAt = firstFull ? started + firstFull[0] * 1000 : Date.now();
  const loadS = (loadEnded - started) / 1000;
  const at = (s: number) => {
    const point = curve.find(([t]) => t >= s) ?? curve.at(-1);
    return point ?? [s, 0];
  };
  const [t5, n5] = at(5);
  const [tEnd, nEnd] = at(loadS);
  const cpu = monitor.window(result.startedAt, result.endedAt);
  const phase: ThroughputResult = {
    startedAt: result.startedAt,
    durationS: result.durationS,
    ingestRps: result.acceptedRps,
    accepted,
    statuses: result.statuses,
    rowsLanded: rows,
    landingRateDuringLoad: tEnd > t5 ? Math.round((nEnd - n5) / (tEnd - t5)) : 0,
    backlogAtEndOfLoad: Math.max(0, accepted - nEnd),
    drainS: Math.round((lastLandedAt - loadEnded) / 100) / 10,
    sustainedEventsPerSecond: Math.round(rows / ((lastLandedAt - result.startedAt) / 1000)),
    curve,
    lag: {
      max: Math.max(0, ...lagCurve.map(([, n]) => n)),
      atEndOfLoad: (lagCurve.find(([t]) => t >= loadS) ?? lagCurve.at(-1))?.[1] ?? 0,
      curve: lagCurve,
    },
    cpu,
    limitedBy: cpuBound(cpu, 'tally', 2),
  };
  log(
    `throughput: ${phase.sustainedEventsPerSecond} events/s end to end (ingest ${phase.ingestRps}/s, landing ${phase.landingRateDuringLoad}/s during the load, backlog ${phase.backlogAtEndOfLoad}, drained in ${phase.drainS} s, lag at most ${phase.lag.max}); ${phase.limitedBy}`,
  );
  return phase;
}

interface FreshnessResult {
  label: string;
  backgroundRate: number;
  backgroundAchieved: number | null;
  markersSent: number;
  markersAccepted: number;
  markersSeen: number;
  /** From the 202 to the first poll that saw the row, in ms. */
  freshnessMs: ReturnType<typeof percentiles>;
  /** Median time of one warehouse poll, in ms (the measurement's resolution is poll interval + this). */
  pollQueryMs: number;
  cpu: ReturnType<Monitor['window']>;
}

async function freshnessPhase(
  monitor: Monitor,
  server: ServerProcess,
  warehouse: Warehouse,
  tokens: ProjectTokens[],
  marker: ProjectTokens,
  backgroundRate: number,
  label: string,
): Promise<FreshnessResult> {
  const runTag = randomBytes(4).toString('hex');
  const acked = new Map<string, number>();
  const seen = new Map<string, number>();
  const pollTimes: number[] = [];
  let sent = 0;
  const background =
    backgroundRate > 0
      ? startLoad({
          mode: 'fixed',
          url: server.url,
          path: '/api/ingest',
          connections: 128,
          warmupS: 0,
          durationS: options.freshnessDuration,
          rate: backgroundRate,
          templates: buildTemplates({ tokens, clientIps: options.clientIps, seed: 21 }),
        })
      : null;
  if (background) monitor.watch('load generator', background.child.pid);
  const startedAt = Date.now();

  let polling = true;
  const poller = (async () => {
    while (polling) {
      const t = Date.now();
      const rows = await warehouse.query<{ id: string }>(
        'SELECT id FROM events WHERE project_id = {project:String} AND session_id = {tag:String}',
        { project: marker.project, tag: runTag },
      );
      const done = Date.now();
      pollTimes.push(done - t);
      for (const { id } of rows) if (!seen.has(id)) seen.set(id, done);
      await sleep(Math.max(0, options.pollMs - (Date.now() - t)));
    }
  })();

  // Markers: one pageview every 1/rate s, each with its own id, from a browser's point of view.
  const sends: Promise<void>[] = [];
  const interval = 1000 / options.markerRate;
  const end = startedAt + options.freshnessDuration * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const due = startedAt + i * interval;
    await sleep(Math.max(0, due - Date.now()));
    const id = `${runTag}-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
    sent++;
    sends.push(
      fetch(`${server.url}/api/ingest`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-token': marker.publicToken,
          'user-agent':
            'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
        },
        body: JSON.stringify({
          type: 'pageview',
          id,
          data: { url: 'https://marker.example.com/', path: '/', session_id: runTag, timestamp: Date.now() },
        }),
      }).then(
        async (response) => {
          await response.arrayBuffer();
          if (response.status === 202) acked.set(id, Date.now());
        },
        () => {},
      ),
    );
  }
  await Promise.all(sends);
  const backgroundResult = background ? await background.result : null;
  if (background) monitor.unwatch('load generator');
  const endedAt = Date.now();
  // Every accepted marker, or 30 s more.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && [...acked.keys()].some((id) => !seen.has(id))) await sleep(100);
  polling = false;
  await poller;

  const delays = [...acked].filter(([id]) => seen.has(id)).map(([id, t]) => (seen.get(id) as number) - t);
  const sortedPolls = [...pollTimes].sort((a, b) => a - b);
  const result: FreshnessResult = {
    label,
    backgroundRate,
    backgroundAchieved: backgroundResult?.rps ?? null,
    markersSent: sent,
    markersAccepted: acked.size,
    markersSeen: delays.length,
    freshnessMs: percentiles(Float64Array.from(delays)),
    pollQueryMs: sortedPolls[Math.floor(sortedPolls.length / 2)] ?? 0,
    cpu: monitor.window(startedAt, endedAt),
  };
  log(
    `freshness ${label}: p50 ${result.freshnessMs.p50} ms, p95 ${result.freshnessMs.p95} ms, max ${result.freshnessMs.max} ms (${result.markersSeen}/${result.markersAccepted} markers seen; background ${backgroundResult?.rps ?? 0}/s)`,
  );
  return result;
}

/**
 * The freshness target of a phase: its p95, unless markers accepted were never seen (still waiting behind
 * a backlog 30 s after the last was sent): then it is missed, whatever the seen ones' delays were.
 */
function freshnessTarget(result: FreshnessResult): TargetCheck | NotMeasured {
  if (result.markersSeen < result.markersAccepted) {
    return {
      target: `≤ ${TARGETS.freshnessP95Ms} ms`,
      measured: `${result.markersSeen} of ${result.markersAccepted} markers landed within 30 s of the last one sent`,
      met: false,
      missedBy: 'over 30,000 ms for the markers not seen',
    };
  }
  return atMost(TARGETS.freshnessP95Ms, result.freshnessMs.p95, ' ms', 0);
}

interface BackendResult {
  backend: string;
  settings: Record<string, string>;
  throughput: ThroughputResult;
  freshness: FreshnessResult[];
  /** p95 of the freshness under load, in ms. */
  freshnessP95Ms: number;
  peakRss: { rssMiB: number; anonMiB: number; fileMiB: number };
  /** [s since the load started, RSS, anonymous, file-backed] in MiB, the highest of every 10 s. */
  rssCurve: Array<[number, number, number, number]>;
  targets: Record<string, TargetCheck | NotMeasured>;
  machineLoad: { before: LoadSnapshot; after: LoadSnapshot };
}

async function runBackend(backend: string, services: Services | null): Promise<BackendResult> {
  const before = loadSnapshot();
  const runId = randomBytes(3).toString('hex');
  const dataDir = tempDir(`e2e-${backend}`);
  const topicPrefix = `bench-${runId}.`;
  const redisPrefix = `bench-${runId}:`;
  let env: Record<string, string> = {
    TALLY_DATA_DIR: dataDir,
    CLICKHOUSE_URL: '',
    CLICKHOUSE_DATABASE: 'tally',
  };
  if (backend === 'kafka') {
    if (!services) throw new Error('kafka needs services');
    env = {
      ...env,
      REDIS_URL: services.redisUrl,
      REDIS_KEY_PREFIX: redisPrefix,
      KAFKA_BROKERS: services.kafkaBrokers,
      SCHEMA_REGISTRY_URL: services.schemaRegistryUrl,
      KAFKA_TOPIC_PREFIX: topicPrefix,
    };
  }
  onInterrupt(async () => {
    removeDir(dataDir);
    if (backend === 'kafka' && services) await removeRunState(services, topicPrefix, redisPrefix);
  });
  const allTokens = await createTokens(
    options.projects + 1,
    backend === 'kafka' && services ? { redisUrl: services.redisUrl, prefix: redisPrefix } : { dataDir },
  );
  const marker = allTokens.at(-1) as ProjectTokens;
  const tokens = allTokens.slice(0, -1);
  const monitor = new Monitor(100);
  if (backend === 'kafka')
    for (const [name, pid] of Object.entries(services?.pids ?? {})) monitor.watch(name, pid);
  const nodeArgs = options.cpuProf
    ? ['--cpu-prof', `--cpu-prof-dir=${resolve(String(options.cpuProf), `tally-${backend}`)}`]
    : [];
  let server: ServerProcess | null = null;
  let warehouse: Warehouse | null = null;
  try {
    server = await startTallyServer(env, nodeArgs);
    monitor.watch('tally', server.child.pid);
    warehouse = await openPublishedWarehouse(dataDir);
    log(`${backend}: tally ${server.url}`);
    // The consumers are running (Kafka: they joined their groups) once one record has made the trip.
    await waitForConsumers(server, warehouse, marker);

    const throughput = await throughputPhase(monitor, server, warehouse, tokens);
    const freshness = [
      await freshnessPhase(monitor, server, warehouse, tokens, marker, 0, 'markers only'),
      await freshnessPhase(
        monitor,
        server,
        warehouse,
        tokens,
        marker,
        Math.round((throughput.sustainedEventsPerSecond * options.freshnessLoad) / 100),
        `at ${options.freshnessLoad}% of the sustained rate`,
      ),
    ];
    const underLoad = freshness[1] as FreshnessResult;
    const peakRss = monitor.peakRss('tally');
    // From the start of the load to the end of the run, the highest sample of every 10 s.
    const rssCurve = monitor.rssCurve('tally', throughput.startedAt);
    return {
      backend,
      settings: {
        recordLog: backend === 'kafka' ? `Kafka ${services?.kafkaBrokers}` : 'embedded LMDB',
        rateLimitAndTokens: backend === 'kafka' ? 'Redis' : 'in memory / data directory',
        warehouse: 'chDB (embedded), read through the published HTTP endpoint',
        CONSUMER_BATCH_SIZE: process.env.CONSUMER_BATCH_SIZE ?? '20000 (default)',
        CONSUMER_BATCH_WAIT_MS: process.env.CONSUMER_BATCH_WAIT_MS ?? '500 (default)',
        REVENUE_BATCH_WAIT_MS: process.env.REVENUE_BATCH_WAIT_MS ?? '2000 (default)',
      },
      throughput,
      freshness,
      freshnessP95Ms: underLoad.freshnessMs.p95,
      peakRss,
      rssCurve,
      targets: {
        eventsPerSecond: atLeast(
          TARGETS.eventsPerSecond,
          throughput.sustainedEventsPerSecond,
          ' events/s',
          0,
        ),
        freshnessP95: freshnessTarget(underLoad),
      },
      machineLoad: { before, after: loadSnapshot() },
    };
  } finally {
    monitor.stop();
    await warehouse?.close().catch(() => {});
    await server?.child.stop(30_000);
    removeDir(dataDir);
    if (backend === 'kafka' && services) await removeRunState(services, topicPrefix, redisPrefix);
  }
}

async function waitForConsumers(server: ServerProcess, warehouse: Warehouse, marker: ProjectTokens) {
  const id = `${randomBytes(4).toString('hex')}-0000-7000-8000-000000000000`;
  const response = await fetch(`${server.url}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': marker.publicToken },
    body: JSON.stringify({
      type: 'pageview',
      id,
      data: { session_id: 'warm-up', url: 'https://marker.example.com/' },
    }),
  });
  if (response.status !== 202) throw new Error(`warm-up record answered ${response.status}`);
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const rows = await warehouse.query('SELECT id FROM events WHERE id = {id:String}', { id });
    if (rows.length) return;
    await sleep(200);
  }
  throw new Error('the warm-up record did not reach the warehouse in 90 s');
}

async function main(): Promise<void> {
  const results = await runBackends(String(options.backends), runBackend);
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'e2e',
        date: new Date().toISOString(),
        machine: machineInfo(),
        settings: {
          durationS: options.duration,
          connections: options.connections,
          freshnessDurationS: options.freshnessDuration,
          freshnessLoadPercent: options.freshnessLoad,
          markerRate: options.markerRate,
          pollMs: options.pollMs,
          mix: DEFAULT_MIX,
          projects: options.projects,
          clientIps: options.clientIps,
        },
        results,
      },
      null,
      2,
    )}\n`,
  );
}

main().catch(async (error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  await stopAll();
  process.exit(1);
});
