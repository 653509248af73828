// Peer benchmark (`npm run bench:peer`): Tally's gateway alone (embedded defaults, its default loops)
// against another ingestion gateway on the same machine, in alternated runs (Tally, peer, Tally, peer, …) so
// that both meet the same machine state, under the same load generator, connections and duration. Per run:
// 2xx requests per second, latency percentiles, the server's CPU (and its database's: Postgres processes,
// when the peer keeps its queue there) per accepted request, and its peak RSS. Prints one JSON object.
//
// The peer it was written for is RudderStack's gateway (rudder-server, Go), which acknowledges an event
// after a synchronous Postgres commit. Nothing of it is built or downloaded here: give the binary and a
// Postgres it may use (BENCHMARKS.md, "Against a Go peer: bench:peer", says how to obtain both):
//
//   npm run bench:peer -- --rudder-bin /path/to/rudder-server \
//     --postgres-url postgres://rudder:password@127.0.0.1:5432/jobsdb [--rounds 3] [--duration 15]
//     [--connections 256] [--generator wrk|autocannon] [--memory-limit <MiB>]
//
// `--memory-limit`: each side's server runs in a memory cgroup of that size of its own (lib/cgroup.ts; root
// only), as a gateway replica in a container does; the peer's Postgres stays outside its group (its memory
// is not counted against the peer). Per run, each side's peak RssAnon and its group's peak use and OOM
// kills; a side the kernel killed serves nothing in its later runs (0 req/s), and the JSON says when.
//
// `--peer tally` runs a second Tally gateway as the peer instead: a check of the harness itself, whose two
// sides should measure alike (no binary needed).
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createMemoryCgroup, type MemoryCgroup } from './lib/cgroup.ts';
import { type Child, Monitor, onInterrupt, round1, sleep, startChild, stopAll } from './lib/children.ts';
import { type LoadResult, startLoad } from './lib/load.ts';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { parseArgs, spread } from './lib/report.ts';
import { createTokens, imageNodeFlags, removeDir, startGatewayServer, tempDir } from './lib/stack.ts';
import { buildTemplates, type RequestTemplate } from './lib/workload.ts';

const options = parseArgs(
  {
    peer: 'rudder',
    rudderBin: '',
    postgresUrl: '',
    rounds: 3,
    duration: 15,
    warmup: 2,
    connections: 256,
    generator: 'autocannon',
    clientIps: 1000,
    memoryLimit: 0,
  },
  process.argv.slice(2),
);
const log = (message: string) => process.stderr.write(`[bench:peer] ${message}\n`);

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The pids of the machine's Postgres processes (the peer's database), from /proc. */
function postgresPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Waits until `url` answers 2xx, or fails after `timeoutMs`. */
async function waitForOk(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (child.process.exitCode !== null)
      throw new Error(`the peer exited (${child.process.exitCode}):\n${child.output()}`);
    if (Date.now() > deadline) throw new Error(`the peer did not answer ${url} in time:\n${child.output()}`);
    await sleep(250);
  }
}

/**
 * Track calls for RudderStack's HTTP API (`POST /v1/track`, Basic auth with the source's write key), sized
 * like Tally's custom events (a name, a few properties, page and user-agent context); `messageId` made
 * unique per request by the generator.
 */
function rudderTemplates(writeKey: string, count = 200): RequestTemplate[] {
  const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
  return Array.from({ length: count }, (_, i) => {
    const body = JSON.stringify({
      type: 'track',
      event: ['signup_clicked', 'plan_selected', 'video_played', 'docs_search'][i % 4],
      messageId: '@@id@@',
      anonymousId: `anon-${i % 97}`,
      properties: { plan: 'pro', position: 'hero', variant: i % 2 ? 'a' : 'b' },
      context: {
        page: {
          path: '/pricing',
          url: 'https://shop.example.com/pricing',
          referrer: 'https://www.google.com/',
        },
        userAgent:
          'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
        locale: 'en-US',
      },
      timestamp: new Date().toISOString(),
    });
    return {
      kind: 'event',
      headers: {
        'content-type': 'application/json',
        authorization,
        'x-forwarded-for': `10.${(i >> 8) & 255}.${i & 255}.1`,
      },
      parts: body.split(/(@@id@@)/),
    };
  });
}

interface Side {
  name: string;
  url: string;
  path: string;
  templates: RequestTemplate[];
  /** Whether the side's database (Postgres) works for it: its CPU is counted with the side's. */
  postgres: boolean;
  /** The memory cgroup its server runs in (--memory-limit), else null. */
  group: MemoryCgroup | null;
  /** Its server's process. */
  child: Child;
}

const groups: MemoryCgroup[] = [];

/** A memory cgroup of --memory-limit MiB for one side's server, or null without the option. */
function sideGroup(name: string): MemoryCgroup | null {
  if (options.memoryLimit <= 0) return null;
  const group = createMemoryCgroup(`tally-bench-peer-${process.pid}-${name}`, options.memoryLimit);
  groups.push(group);
  return group;
}

/** Removes the cgroups, once their servers have been stopped (stopAll). */
function removeGroups(): void {
  for (const group of groups.splice(0)) {
    try {
      group.remove();
    } catch (error) {
      log(`could not remove the cgroup ${group.dir}: ${error instanceof Error ? error.message : error}`);
    }
  }
}
onInterrupt(async () => removeGroups());

/** Why `side`'s server has ended, if it has (its exit seen now, before the 'exit' event may have come). */
function endedNow(side: Side): string | null {
  const { exitCode, signalCode } = side.child.process;
  if (exitCode === null && signalCode === null) return null;
  const how = signalCode ? `killed by ${signalCode}` : `exit code ${exitCode}`;
  return `${side.name} ended (${how}) during the runs`;
}

/**
 * A stand-in for RudderStack's transformer, which the gateway asks for its features (`GET /features`)
 * before it listens, and never again with no destinations: 404 to everything, as a transformer without
 * that endpoint answers. Resolves to its URL.
 */
function transformerStub(): Promise<string> {
  return new Promise((resolve, reject) => {
    const server = createHttpServer((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.unref(); // ends with the bench
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    });
  });
}

/** RudderStack's gateway alone (APP_TYPE=GATEWAY) on a workspace configuration read from a file. */
async function startRudder(dir: string): Promise<Side> {
  if (!options.rudderBin) {
    throw new Error(
      'no RudderStack gateway given: --rudder-bin /path/to/rudder-server (BENCHMARKS.md, "Against a Go peer: ' +
        'bench:peer", says how to obtain it), or --peer tally to check the harness',
    );
  }
  if (!options.postgresUrl)
    throw new Error('--postgres-url postgres://user:password@host:port/database is needed');
  const db = new URL(options.postgresUrl);
  const writeKey = `bench${randomUUID().replaceAll('-', '')}`;
  const workspace = join(dir, 'workspaceConfig.json');
  writeFileSync(
    workspace,
    JSON.stringify({
      sources: [
        {
          id: 'bench-source',
          name: 'bench',
          writeKey,
          enabled: true,
          config: {},
          workspaceId: 'bench-workspace',
          sourceDefinition: { id: 'bench-http', name: 'HTTP', category: null },
          destinations: [],
        },
      ],
    }),
  );
  const port = await freePort();
  const transformer = await transformerStub();
  const group = sideGroup('rudderstack');
  const child = startChild('rudder-server', options.rudderBin, [], {
    ...(group && { cgroup: group.dir }),
    env: {
      ...process.env,
      APP_TYPE: 'GATEWAY',
      JOBS_DB_HOST: db.hostname,
      JOBS_DB_PORT: db.port || '5432',
      JOBS_DB_USER: decodeURIComponent(db.username),
      JOBS_DB_PASSWORD: decodeURIComponent(db.password),
      JOBS_DB_DB_NAME: db.pathname.replace(/^\//, ''),
      JOBS_DB_SSL_MODE: 'disable',
      RSERVER_BACKEND_CONFIG_CONFIG_FROM_FILE: 'true',
      RSERVER_BACKEND_CONFIG_CONFIG_JSONPATH: workspace,
      RSERVER_GATEWAY_WEB_PORT: String(port),
      RSERVER_ENABLE_STATS: 'false',
      WORKSPACE_TOKEN: 'bench',
      LOG_LEVEL: 'WARN',
      INSTANCE_ID: 'bench',
      RUDDER_TMPDIR: dir,
      // Everything it would call stays on this machine: the transformer (asked for its features before
      // the gateway listens), and nothing at all for the control plane, diagnostics and reporting.
      DEST_TRANSFORM_URL: transformer,
      CONFIG_BACKEND_URL: 'http://127.0.0.1:9',
      REPORTING_URL: 'http://127.0.0.1:9',
      RSERVER_DIAGNOSTICS_ENABLE_DIAGNOSTICS: 'false',
      RSERVER_REPORTING_ENABLED: 'false',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/health`, child, 120_000);
  return {
    name: 'rudderstack',
    url,
    path: '/v1/track',
    templates: rudderTemplates(writeKey),
    postgres: true,
    group,
    child,
  };
}

async function startTally(name: string): Promise<Side> {
  const dataDir = tempDir(`peer-${name}`);
  onInterrupt(async () => removeDir(dataDir));
  const tokens = await createTokens(8, { dataDir });
  const group = sideGroup(name);
  const gateway = await startGatewayServer({ TALLY_DATA_DIR: dataDir }, { cgroup: group?.dir });
  return {
    name,
    url: gateway.url,
    path: '/api/ingest',
    templates: buildTemplates({ tokens, clientIps: options.clientIps }),
    postgres: false,
    group,
    child: gateway.child,
  };
}

interface Run {
  round: number;
  side: string;
  acceptedRps: number;
  statuses: Record<string, number>;
  latencyMs: LoadResult['latencyMs'];
  serverCpuPercent: number | null;
  databaseCpuPercent: number | null;
  /** Server (and database) CPU time per 2xx answer, µs. */
  cpuPerRequestUs: number | null;
  peakRssMiB: number | null;
  /** The server's own memory (RssAnon) and its mapped files' resident pages (RssFile), at their peaks. */
  peakRssAnonMiB: number | null;
  peakRssFileMiB: number | null;
  /** With --memory-limit: its group's peak use (its memory and the page cache charged to it), OOM kills so far. */
  cgroupPeakMiB?: number | null;
  oomKills?: number;
  /** Why the run is not a full measurement: the server ended during it (or before: then nothing was loaded). */
  ended?: string;
  otherCpuPercent: number;
}

/** With --memory-limit: the side's group's peak use and OOM kills so far (Run's fields). */
function groupFigures(side: Side): Pick<Run, 'cgroupPeakMiB' | 'oomKills'> {
  return side.group ? { cgroupPeakMiB: side.group.peakMiB(), oomKills: side.group.oomKills() } : {};
}

/** A run of a side whose server had ended before it: it served nothing. */
function endedRun(side: Side, round: number, ended: string): Run {
  log(`round ${round} ${side.name}: not loaded, ${ended}`);
  return {
    round,
    side: side.name,
    acceptedRps: 0,
    statuses: {},
    latencyMs: { p50: 0, p90: 0, p99: 0, p99_9: 0, max: 0, mean: 0 }, // none: see `ended`
    serverCpuPercent: null,
    databaseCpuPercent: null,
    cpuPerRequestUs: null,
    peakRssMiB: null,
    peakRssAnonMiB: null,
    peakRssFileMiB: null,
    ...groupFigures(side),
    ended,
    otherCpuPercent: 0,
  };
}

async function measure(side: Side, round: number, monitor: Monitor): Promise<Run> {
  const endedBefore = endedNow(side);
  if (endedBefore) return endedRun(side, round, endedBefore);
  const database = side.postgres ? postgresPids() : [];
  for (const pid of database) monitor.watch(`postgres ${pid}`, pid);
  const load = startLoad({
    mode: 'max',
    generator: options.generator === 'wrk' ? 'wrk' : 'autocannon',
    url: side.url,
    path: side.path,
    connections: options.connections,
    warmupS: options.warmup,
    durationS: options.duration,
    templates: side.templates,
  });
  monitor.watch('load generator', load.child.pid);
  let result: LoadResult;
  try {
    result = await load.result;
  } catch (error) {
    // The generator fails when the server is gone (connection refused): a side killed for want of memory.
    monitor.unwatch('load generator');
    for (const pid of database) monitor.unwatch(`postgres ${pid}`);
    await Promise.race([side.child.exited, sleep(1000)]);
    const ended = endedNow(side);
    if (ended) return endedRun(side, round, ended);
    throw error;
  }
  const usage = monitor.window(result.startedAt, result.endedAt);
  monitor.unwatch('load generator');
  for (const pid of database) monitor.unwatch(`postgres ${pid}`);
  const ended = endedNow(side);
  const server = usage.processes[side.name];
  // A server that ended during the run has no CPU time at its end to count from.
  const own = ended ? undefined : server;
  const databaseCpu = database.length
    ? database.reduce((sum, pid) => sum + (usage.processes[`postgres ${pid}`]?.cpuPercent ?? 0), 0)
    : null;
  const cpu = (own?.cpuPercent ?? 0) + (databaseCpu ?? 0);
  const run: Run = {
    round,
    side: side.name,
    acceptedRps: result.acceptedRps,
    statuses: result.statuses,
    latencyMs: result.latencyMs,
    serverCpuPercent: own?.cpuPercent ?? null,
    databaseCpuPercent: databaseCpu,
    cpuPerRequestUs: own && result.acceptedRps > 0 ? round1((cpu / 100 / result.acceptedRps) * 1e6) : null,
    peakRssMiB: server?.peakRssMiB ?? null,
    peakRssAnonMiB: server?.peakRssAnonMiB ?? null,
    peakRssFileMiB: server?.peakRssFileMiB ?? null,
    ...groupFigures(side),
    ...(ended && { ended }),
    otherCpuPercent: usage.otherCpuPercent,
  };
  log(
    `round ${round} ${side.name}: ${run.acceptedRps} req/s, p99 ${run.latencyMs.p99} ms, ` +
      `${run.cpuPerRequestUs} µs CPU per request, peak RSS ${run.peakRssMiB} MiB (RssAnon ${run.peakRssAnonMiB})` +
      (ended ? `; ${ended}` : ''),
  );
  return run;
}

async function main(): Promise<void> {
  const dir = tempDir('peer');
  onInterrupt(async () => removeDir(dir));
  const monitor = new Monitor(100);
  const before = loadSnapshot();
  const tally = await startTally('tally');
  const peer = options.peer === 'tally' ? await startTally('tally-as-peer') : await startRudder(dir);
  monitor.watch(tally.name, tally.child.pid);
  monitor.watch(peer.name, peer.child.pid);
  log(`tally ${tally.url} (pid ${tally.child.pid}), ${peer.name} ${peer.url} (pid ${peer.child.pid})`);
  const runs: Run[] = [];
  try {
    for (let round = 1; round <= options.rounds; round++) {
      runs.push(await measure(tally, round, monitor));
      runs.push(await measure(peer, round, monitor));
    }
  } finally {
    monitor.stop();
    await stopAll();
    removeDir(dir);
  }
  const of = (name: string) => runs.filter((r) => r.side === name);
  const summary = (side: Side) => {
    const own = of(side.name);
    // The tail and the CPU of the runs it served; a run after its server ended counts as 0 req/s.
    const served = own.filter((r) => !r.ended);
    return {
      acceptedRps: spread(own.map((r) => r.acceptedRps)),
      p99Ms: served.length ? spread(served.map((r) => r.latencyMs.p99)) : null,
      cpuPerRequestUs: served.length ? spread(served.map((r) => r.cpuPerRequestUs ?? 0)) : null,
      peakRssMiB: Math.max(0, ...own.map((r) => r.peakRssMiB ?? 0)),
      peakRssAnonMiB: Math.max(0, ...own.map((r) => r.peakRssAnonMiB ?? 0)),
      ...(side.group && {
        container: {
          memoryLimitMiB: side.group.limitMiB,
          cgroup: `v${side.group.version}`,
          peakMiB: side.group.peakMiB(),
          oomKills: side.group.oomKills(),
          ended: own.find((r) => r.ended)?.ended ?? null,
        },
      }),
    };
  };
  const tallySummary = summary(tally);
  const peerSummary = summary(peer);
  removeGroups();
  const ratio =
    peerSummary.acceptedRps.median > 0
      ? tallySummary.acceptedRps.median / peerSummary.acceptedRps.median
      : null;
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'peer',
        machine: machineInfo(),
        settings: { ...options, node: process.version, tallyNodeFlags: imageNodeFlags() },
        machineLoadBefore: before,
        runs,
        summary: { [tally.name]: tallySummary, [peer.name]: peerSummary },
        acceptedRpsRatio: ratio === null ? null : Math.round(ratio * 100) / 100,
        target: {
          what: 'Tally ≥ 1.5 × the peer’s 2xx req/s (issue 27)',
          met: ratio !== null && ratio >= 1.5,
        },
      },
      null,
      2,
    )}\n`,
  );
}

main().catch(async (error: unknown) => {
  log(error instanceof Error ? error.message : String(error));
  await stopAll();
  removeGroups();
  process.exit(1);
});
