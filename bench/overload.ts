// Overload benchmark (`npm run bench:overload`): the gateway under more load than it can serve, beside
// the ceiling of a bare Fastify server on the same Node, in one run. Targets, one after the other, each
// started fresh with its own data directory (embedded log, in-memory rate limit, client IPs taken from
// X-Forwarded-For as behind a proxy on this machine):
//   ceiling      bench/lib/ceiling-server.ts (one event loop: what one core of Node.js serves)
//   gateway-1    services/gateway, GATEWAY_WORKERS=1
//   gateway-2    services/gateway, GATEWAY_WORKERS=2
//   npm-start    services/embedded (gateway threads, consumers and chDB in one process), GATEWAY_WORKERS
//                at its default (one per core)
// Phases, bounded in time:
//   max       `--connections` (256) keep-alive connections, closed loop (autocannon): 2xx req/s, latency
//             percentiles, statuses, CPU per request (the server's CPU time / answered requests), peak RSS;
//   overload  (gateways) open loop at `--overload`× (2×) the rate its max phase reached, over
//             `--overload-connections` (1024) connections so that more requests arrive than admission
//             control admits: shed rate (503s), latency of the accepted (2xx) answers from when each was due.
// Bodies are ~250-byte pageviews with `--client-ips` distinct X-Forwarded-For addresses. The load generator
// is always its own process. Prints one JSON object on stdout; progress on stderr.
//
//   node --conditions=@tally/source --import tsx bench/overload.ts [--duration 10] [--warmup 2]
//     [--connections 256] [--overload 2] [--overload-connections 1024] [--client-ips 5000]
//     [--targets ceiling,gateway-1,gateway-2,npm-start] [--generator wrk|autocannon] [--repeat 1]
// With --repeat N the targets run in turn N times (ceiling, gateways, ceiling, gateways…), so that a drift
// of the machine falls on all of them; each run's ratios are to the same run's ceiling, and the medians of
// the runs are reported beside them.
// The max phase's generator is autocannon, or wrk (`apt-get install wrk`) with --generator wrk, the tool
// the issue's own measurements used; the generator's CPU (wrk, a child of the generator process,
// included) is reported beside the server's.
import { type Child, highWaterMiB, killChildrenOnExit, Monitor, startNode, stopAll } from './lib/children.ts';
import { type LoadResult, startLoad } from './lib/load.ts';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { parseArgs, spread } from './lib/report.ts';
import {
  createTokens,
  removeDir,
  type ServerProcess,
  startGatewayServer,
  startTallyServer,
  tempDir,
} from './lib/stack.ts';
import { averageBodyBytes, buildTemplates, type RequestTemplate } from './lib/workload.ts';

const options = parseArgs(
  {
    duration: 10,
    warmup: 2,
    connections: 256,
    overload: 2,
    overloadConnections: 1024,
    clientIps: 5000,
    targets: 'ceiling,gateway-1,gateway-2,npm-start',
    generator: 'autocannon',
    repeat: 1,
  },
  process.argv.slice(2),
);
if (options.generator !== 'wrk' && options.generator !== 'autocannon')
  throw new Error(`--generator ${options.generator}: wrk or autocannon`);
const log = (message: string) => process.stderr.write(`[bench:overload] ${message}\n`);
const PAGEVIEWS_ONLY = { pageview: 100, event: 0, identify: 0, revenue: 0 };

interface Phase {
  acceptedRps: number;
  rps: number;
  statuses: Record<string, number>;
  /** Share of the answers that were 503 (shed by admission control, or the log's). */
  shedPercent: number;
  errors: number;
  /** max: every answer (autocannon; nearly all 2xx); overload: the 2xx answers only, from when each was due. */
  latencyMs: Pick<LoadResult['latencyMs'], 'p50' | 'p99' | 'p99_9' | 'max'>;
  cpuUsPerRequest: number;
  cpuPercent: number;
  /** The load generator's CPU (its process and children), in % of one core. */
  generatorCpuPercent: number;
  otherCpuPercent: number;
  peakRssMiB: number;
  /** Of which the process's own memory (RssAnon), without the record log's file pages LMDB maps in. */
  peakRssAnonMiB: number;
  targetRate?: number;
  unsent?: number;
}

async function phase(
  monitor: Monitor,
  url: string,
  name: string,
  templates: RequestTemplate[],
  mode: 'max' | 'fixed',
  rate?: number,
): Promise<Phase> {
  const load = startLoad({
    mode,
    url,
    path: '/api/ingest',
    connections: mode === 'max' ? options.connections : options.overloadConnections,
    generator: options.generator as 'wrk' | 'autocannon',
    warmupS: options.warmup,
    durationS: options.duration,
    ...(rate !== undefined && { rate }),
    templates,
  });
  monitor.watch('load generator', load.child.pid);
  const result = await load.result;
  const cpu = monitor.window(result.startedAt, result.endedAt);
  monitor.unwatch('load generator');
  const server = cpu.processes[name];
  const completed = Object.values(result.statuses).reduce((a, b) => a + b, 0);
  const latency = mode === 'fixed' && result.acceptedLatencyMs ? result.acceptedLatencyMs : result.latencyMs;
  const answered = result.rps;
  const out: Phase = {
    acceptedRps: result.acceptedRps,
    rps: answered,
    statuses: result.statuses,
    shedPercent: completed ? Math.round(((result.statuses['503'] ?? 0) / completed) * 1000) / 10 : 0,
    errors: result.errors,
    latencyMs: { p50: latency.p50, p99: latency.p99, p99_9: latency.p99_9, max: latency.max },
    cpuUsPerRequest: answered ? Math.round(((server?.cpuPercent ?? 0) / 100 / answered) * 1e7) / 10 : 0,
    cpuPercent: server?.cpuPercent ?? 0,
    generatorCpuPercent: cpu.processes['load generator']?.cpuPercent ?? 0,
    otherCpuPercent: cpu.otherCpuPercent,
    peakRssMiB: server?.peakRssMiB ?? 0,
    peakRssAnonMiB: server?.peakRssAnonMiB ?? 0,
    ...(rate !== undefined && { targetRate: rate, unsent: result.unsent ?? 0 }),
  };
  log(
    `${name} ${mode}${rate ? ` @${rate}/s` : ''}: ${out.acceptedRps} 2xx/s, shed ${out.shedPercent}%, p50 ${out.latencyMs.p50} ms, p99 ${out.latencyMs.p99} ms, p99.9 ${out.latencyMs.p99_9} ms, ${out.cpuUsPerRequest} µs CPU/request, RSS ${out.peakRssMiB} MiB (anon ${out.peakRssAnonMiB}) (load generator ${out.generatorCpuPercent}% CPU, others on the machine ${out.otherCpuPercent}%)`,
  );
  return out;
}

interface TargetResult {
  target: string;
  /** Which of the --repeat runs (from 1). */
  run: number;
  max: Phase;
  overload?: Phase;
  /** The kernel's peak RSS of the process over its whole run (VmHWM). */
  highWaterRssMiB: number | null;
}

async function runTarget(target: string, run: number, monitor: Monitor): Promise<TargetResult> {
  const dataDir = tempDir(`overload-${target}`);
  let child: Child | null = null;
  try {
    const tokens = await createTokens(4, { dataDir });
    const templates = buildTemplates({
      tokens,
      clientIps: options.clientIps,
      mix: PAGEVIEWS_ONLY,
      size: 512,
    });
    let url: string;
    if (target === 'ceiling') {
      child = startNode('ceiling', 'bench/lib/ceiling-server.ts', [], {});
      url = (await child.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1] as string;
    } else {
      const env = { TALLY_DATA_DIR: dataDir };
      let server: ServerProcess;
      if (target === 'npm-start') server = await startTallyServer(env);
      else server = await startGatewayServer({ ...env, GATEWAY_WORKERS: target.split('-')[1] ?? '1' });
      child = server.child;
      url = server.url;
    }
    monitor.watch(target, child.pid);
    log(`${target}: ${url}; ${JSON.stringify(averageBodyBytes(templates))} body bytes`);
    const max = await phase(monitor, url, target, templates, 'max');
    const overload =
      target === 'ceiling'
        ? undefined
        : await phase(
            monitor,
            url,
            target,
            templates,
            'fixed',
            Math.round(max.acceptedRps * options.overload),
          );
    const highWaterRssMiB = highWaterMiB(child.pid);
    monitor.unwatch(target);
    return { target, run, max, ...(overload && { overload }), highWaterRssMiB };
  } finally {
    await child?.stop();
    removeDir(dataDir);
  }
}

killChildrenOnExit();
const before = loadSnapshot();
const monitor = new Monitor();
const results: TargetResult[] = [];
try {
  for (let run = 1; run <= options.repeat; run++) {
    for (const target of options.targets.split(',')) results.push(await runTarget(target, run, monitor));
  }
} finally {
  monitor.stop();
  await stopAll();
}
const after = loadSnapshot();
/** Each run's 2xx/s over the same run's ceiling; null without a ceiling. */
const ratioOf = (r: TargetResult) => {
  const ceiling = results.find((c) => c.target === 'ceiling' && c.run === r.run)?.max.acceptedRps ?? 0;
  return ceiling ? Math.round((r.max.acceptedRps / ceiling) * 100) / 100 : null;
};
const others = [...new Set(results.map((r) => r.target))].filter((t) => t !== 'ceiling');
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'overload',
      node: process.version,
      machine: machineInfo(),
      machineLoad: { before, after },
      settings: options,
      ratiosToCeiling: Object.fromEntries(
        others.map((target) => {
          const perRun = results.filter((r) => r.target === target).map(ratioOf);
          const known = perRun.filter((x): x is number => x !== null);
          return [target, { median: known.length ? spread(known).median : null, perRun }];
        }),
      ),
      results,
    },
    null,
    2,
  )}\n`,
);
