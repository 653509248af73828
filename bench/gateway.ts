// Gateway benchmark (`npm run bench:gateway`): POST /api/ingest throughput and latency with the record
// log the configuration names, against the ceiling of a bare Fastify server on the same Node.
// For each backend (embedded defaults: LMDB log, in-memory rate limit, tokens in the data directory; and
// kafka: Kafka log + Redis for rate limits and tokens), in one run:
//   1. the ceiling (bench/lib/ceiling-server.ts) and the gateway at full speed, alternately, `--repeat`
//      times: requests per second and latency percentiles (autocannon, closed loop);
//   2. the gateway at a fixed rate of 25%, 50% and 75% of its measured maximum: latency percentiles
//      (open loop, wrk2-style: latency counted from when each request was due);
//   3. the gateway's peak RSS over the whole run (VmRSS sampled every 100 ms, and the kernel's VmHWM).
// The load generator is always a separate process. Prints one JSON object on stdout; progress on stderr.
//
//   node --conditions=@tally/source --import tsx bench/gateway.ts [--backends embedded,kafka] [--duration 15] [--warmup 3]
//     [--connections 256] [--repeat 3] [--fixed-duration 10] [--client-ips 1000] [--projects 8]
//     [--skip-ceiling] [--skip-fixed]   (when profiling: the gateway at full speed only)
//     [--cpu-prof <dir>]   (writes the gateway's V8 CPU profiles to <dir>/gateway-<backend>/ when it
//     exits: one per thread; the largest is the main thread's — read it with bench/profile.ts)
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { highWaterMiB, Monitor, onInterrupt, startNode, stopAll } from './lib/children.ts';
import type { LoadResult } from './lib/load.ts';
import { startLoad } from './lib/load.ts';
import { type LoadSnapshot, loadSnapshot, machineInfo } from './lib/machine.ts';
import {
  atLeast,
  atMost,
  bucketPercentiles,
  cpuBound,
  histogramBuckets,
  type NotMeasured,
  parseArgs,
  spread,
  type TargetCheck,
} from './lib/report.ts';
import {
  createTokens,
  removeDir,
  removeRunState,
  runBackends,
  type ServerProcess,
  type Services,
  startGatewayServer,
  tempDir,
} from './lib/stack.ts';
import { averageBodyBytes, buildTemplates, DEFAULT_MIX, type RequestTemplate } from './lib/workload.ts';

const options = parseArgs(
  {
    backends: 'embedded,kafka',
    duration: 15,
    warmup: 3,
    connections: 256,
    repeat: 3,
    fixedDuration: 10,
    fixedConnections: 128,
    clientIps: 1000,
    projects: 8,
    cpuProf: '',
    skipCeiling: false,
    skipFixed: false,
  },
  process.argv.slice(2),
);
const TARGETS = { ratio: 80, p99At50Ms: 10, rssMiB: 150 };
const log = (message: string) => process.stderr.write(`[bench:gateway] ${message}\n`);

interface MaxPhase {
  acceptedRps: number;
  rps: number;
  latencyMs: LoadResult['latencyMs'];
  statuses: Record<string, number>;
  errors: number;
  /** CPU time the server spent per answered request, in µs: robust to a busy machine, unlike rps. */
  serverCpuUsPerRequest: number;
  cpu: ReturnType<Monitor['window']>;
}

interface FixedPhase {
  loadPercent: number;
  targetRate: number;
  achievedRate: number;
  unsent: number;
  statuses: Record<string, number>;
  errors: number;
  latencyMs: LoadResult['latencyMs'];
  serviceTimeMs: LoadResult['latencyMs'] | undefined;
  /** The gateway's own tally_log_append_duration_seconds over the phase: bucket bounds in ms ("≤"). */
  appendMsAtMost: Record<string, number>;
  cpu: ReturnType<Monitor['window']>;
}

interface BackendResult {
  backend: string;
  settings: Record<string, string>;
  ceiling: { acceptedRps: ReturnType<typeof spread>; phases: MaxPhase[] };
  gateway: {
    acceptedRps: ReturnType<typeof spread>;
    phases: MaxPhase[];
    /** Peak VmRSS sampled every 100 ms over the whole run, and its anonymous and file-backed parts. */
    peakRss: { rssMiB: number; anonMiB: number; fileMiB: number };
    /** The kernel's VmHWM at the end of the run: the peak RSS since the process started. */
    highWaterRssMiB: number | null;
  };
  /** CPU time per answered request of each server (all its threads), in µs: steadier than rps on a busy machine. */
  cpuUsPerRequest: { ceiling: ReturnType<typeof spread>; gateway: ReturnType<typeof spread> };
  /** Gateway throughput as % of the ceiling's, from the medians (and per repeat). */
  ratioToCeilingPercent: number;
  ratioPerRepeat: number[];
  limitedBy: string;
  fixed: FixedPhase[];
  targets: Record<string, TargetCheck | NotMeasured>;
  machineLoad: { before: LoadSnapshot; after: LoadSnapshot };
}

async function maxPhase(
  monitor: Monitor,
  server: ServerProcess | { url: string },
  name: string,
  templates: RequestTemplate[],
): Promise<MaxPhase> {
  const load = startLoad({
    mode: 'max',
    url: server.url,
    path: '/api/ingest',
    connections: options.connections,
    warmupS: options.warmup,
    durationS: options.duration,
    templates,
  });
  monitor.watch('load generator', load.child.pid);
  const result = await load.result;
  const cpu = monitor.window(result.startedAt, result.endedAt);
  monitor.unwatch('load generator');
  const serverCpu = cpu.processes[name]?.cpuPercent ?? 0;
  const phase = {
    acceptedRps: result.acceptedRps,
    rps: result.rps,
    latencyMs: result.latencyMs,
    statuses: result.statuses,
    errors: result.errors,
    serverCpuUsPerRequest: result.rps ? Math.round((serverCpu / 100 / result.rps) * 1e7) / 10 : 0,
    cpu,
  };
  log(
    `${name}: ${result.acceptedRps} accepted/s (${JSON.stringify(result.statuses)}), p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ${phase.serverCpuUsPerRequest} µs CPU/request; ${cpuBound(cpu, name, 2)}`,
  );
  return phase;
}

async function fixedPhase(
  monitor: Monitor,
  server: ServerProcess,
  loadPercent: number,
  rate: number,
  templates: RequestTemplate[],
): Promise<FixedPhase> {
  const appendMetric = 'tally_log_append_duration_seconds';
  const appendBefore = await histogramBuckets(`${server.adminUrl}/metrics`, appendMetric);
  const load = startLoad({
    mode: 'fixed',
    url: server.url,
    path: '/api/ingest',
    connections: options.fixedConnections,
    warmupS: 2,
    durationS: options.fixedDuration,
    rate,
    templates,
  });
  monitor.watch('load generator', load.child.pid);
  const result = await load.result;
  const cpu = monitor.window(result.startedAt, result.endedAt);
  monitor.unwatch('load generator');
  const append = bucketPercentiles(
    appendBefore,
    await histogramBuckets(`${server.adminUrl}/metrics`, appendMetric),
    [0.5, 0.99, 0.999],
  );
  const appendMsAtMost = Object.fromEntries(Object.entries(append.le).map(([q, s]) => [q, s * 1000]));
  log(
    `gateway at ${loadPercent}% (${rate}/s): achieved ${result.rps}/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, p99.9 ${result.latencyMs.p99_9} ms, unsent ${result.unsent}; record log append p50 ≤ ${appendMsAtMost.p50} ms, p99 ≤ ${appendMsAtMost.p99} ms`,
  );
  return {
    loadPercent,
    targetRate: rate,
    achievedRate: result.rps,
    unsent: result.unsent ?? 0,
    statuses: result.statuses,
    errors: result.errors,
    latencyMs: result.latencyMs,
    serviceTimeMs: result.serviceTimeMs,
    appendMsAtMost,
    cpu,
  };
}

async function runBackend(backend: string, services: Services | null): Promise<BackendResult> {
  const before = loadSnapshot();
  const runId = randomBytes(3).toString('hex');
  const dataDir = tempDir(`gateway-${backend}`);
  const topicPrefix = `bench-${runId}.`;
  const redisPrefix = `bench-${runId}:`;
  let env: Record<string, string> = { TALLY_DATA_DIR: dataDir };
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
  const tokens = await createTokens(
    options.projects,
    backend === 'kafka' && services ? { redisUrl: services.redisUrl, prefix: redisPrefix } : { dataDir },
  );
  const templates = buildTemplates({ tokens, clientIps: options.clientIps });

  const monitor = new Monitor(100);
  if (backend === 'kafka')
    for (const [name, pid] of Object.entries(services?.pids ?? {})) monitor.watch(name, pid);
  const ceilingProcess = startNode('ceiling', 'bench/lib/ceiling-server.ts', [], {});
  const nodeArgs = options.cpuProf
    ? ['--cpu-prof', `--cpu-prof-dir=${resolve(String(options.cpuProf), `gateway-${backend}`)}`]
    : [];
  let gateway: ServerProcess | null = null;
  try {
    const ceilingUrl = (await ceilingProcess.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1] as string;
    gateway = await startGatewayServer(env, { nodeArgs });
    monitor.watch('ceiling', ceilingProcess.pid);
    monitor.watch('gateway', gateway.child.pid);
    log(`${backend}: gateway ${gateway.url}, ceiling ${ceilingUrl}`);

    const ceilingPhases: MaxPhase[] = [];
    const gatewayPhases: MaxPhase[] = [];
    for (let r = 0; r < options.repeat; r++) {
      if (!options.skipCeiling) {
        ceilingPhases.push(await maxPhase(monitor, { url: ceilingUrl }, 'ceiling', templates));
      }
      gatewayPhases.push(await maxPhase(monitor, gateway, 'gateway', templates));
    }
    const ceilingRps = spread(ceilingPhases.map((p) => p.acceptedRps));
    const gatewayRps = spread(gatewayPhases.map((p) => p.acceptedRps));
    const ratio = Math.round((gatewayRps.median / ceilingRps.median) * 1000) / 10;
    const ratioPerRepeat = gatewayPhases.map(
      (p, i) => Math.round((p.acceptedRps / (ceilingPhases[i]?.acceptedRps ?? 1)) * 1000) / 10,
    );

    const fixed: FixedPhase[] = [];
    for (const percent of options.skipFixed ? [] : [25, 50, 75]) {
      const rate = Math.max(1, Math.round((gatewayRps.median * percent) / 100));
      fixed.push(await fixedPhase(monitor, gateway, percent, rate, templates));
    }

    const highWater = highWaterMiB(gateway.child.pid);
    const peakRss = monitor.peakRss('gateway');
    const at50 = fixed.find((f) => f.loadPercent === 50);
    const medianPhase = gatewayPhases.find((p) => p.acceptedRps === gatewayRps.median) ?? gatewayPhases[0];
    return {
      backend,
      settings: {
        recordLog: backend === 'kafka' ? `Kafka ${services?.kafkaBrokers}` : 'embedded LMDB',
        rateLimit: backend === 'kafka' ? 'Redis' : 'in memory',
        RATE_LIMIT_PER_HOUR: '1000000000',
        TRUST_PROXY: '127.0.0.1',
      },
      ceiling: { acceptedRps: ceilingRps, phases: ceilingPhases },
      gateway: { acceptedRps: gatewayRps, phases: gatewayPhases, peakRss, highWaterRssMiB: highWater },
      cpuUsPerRequest: {
        ceiling: spread(ceilingPhases.map((p) => p.serverCpuUsPerRequest)),
        gateway: spread(gatewayPhases.map((p) => p.serverCpuUsPerRequest)),
      },
      ratioToCeilingPercent: ratio,
      ratioPerRepeat,
      limitedBy: medianPhase ? cpuBound(medianPhase.cpu, 'gateway', 2) : '',
      fixed,
      targets: {
        throughputVsCeiling: atLeast(TARGETS.ratio, ratio, '%', 1, ' percentage points'),
        p99At50PercentLoad: atMost(TARGETS.p99At50Ms, at50?.latencyMs.p99 ?? Number.NaN, ' ms', 2),
        peakRss: atMost(TARGETS.rssMiB, Math.max(peakRss.rssMiB, highWater ?? 0), ' MiB'),
      },
      machineLoad: { before, after: loadSnapshot() },
    };
  } finally {
    monitor.stop();
    await gateway?.child.stop();
    await ceilingProcess.stop();
    removeDir(dataDir);
    if (backend === 'kafka' && services) await removeRunState(services, topicPrefix, redisPrefix);
  }
}

async function main(): Promise<void> {
  const results = await runBackends(String(options.backends), runBackend);
  const sample = buildTemplates({
    tokens: [{ project: 'p', publicToken: 'pub_x', secretToken: 'sec_x' }],
    clientIps: 1,
  });
  const output = {
    benchmark: 'gateway',
    date: new Date().toISOString(),
    machine: machineInfo(),
    settings: {
      durationS: options.duration,
      warmupS: options.warmup,
      connections: options.connections,
      repeat: options.repeat,
      fixedDurationS: options.fixedDuration,
      fixedConnections: options.fixedConnections,
      mix: DEFAULT_MIX,
      bodyBytes: averageBodyBytes(sample),
      projects: options.projects,
      clientIps: options.clientIps,
      loadGenerator:
        'autocannon (max, closed loop) / bench/lib/fixed-rate.ts (fixed, open loop), own process',
    },
    results,
  };
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
}

main().catch(async (error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  await stopAll();
  process.exit(1);
});
