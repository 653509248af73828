// Gateway memory benchmark (`npm run bench:gateway-memory`): the gateway alone (embedded defaults, its
// default event loops) under `--runs` consecutive full-speed runs of `--duration` seconds, as issue 27 set
// its memory goal. For each run: accepted requests per second, latency percentiles, and the peaks of the
// process's own memory (RssAnon) and of its resident file pages (RssFile + RssShmem) sampled every 100 ms;
// after each run, where the resident memory is, by mapping (/proc/<pid>/smaps): the record log's LMDB
// file, the Node.js binary, other files (shared libraries, the country database), the C heap and the
// other anonymous mappings (V8's heaps of every isolate, buffers). Prints one JSON object on stdout.
//
//   node --conditions=@tally/source --import tsx bench/gateway-memory.ts [--runs 5] [--duration 12]
//     [--warmup 0] [--connections 256] [--client-ips 1000] [--projects 8] [--memory-limit MiB]
//     [--without-image-flags]
//
// The gateway runs as the image's command does, with its node flags (the Dockerfile's CMD: V8's young
// generation); `--without-image-flags` runs it without them, to measure what they change.
// `--memory-limit`: the gateway runs in a memory cgroup of that size (lib/cgroup.ts; root only), as in a
// container with that limit: the JSON adds the group's peak use (the gateway's memory and the page cache
// charged to it), the kernel's OOM kills, and the event loops the gateway chose; a run in which the
// gateway was killed ends the benchmark, and says so.
import { readFileSync, statSync } from 'node:fs';
import { createMemoryCgroup, type MemoryCgroup } from './lib/cgroup.ts';
import { highWaterMiB, Monitor, onInterrupt, round1, stopAll } from './lib/children.ts';
import { startLoad } from './lib/load.ts';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { atMost, parseArgs } from './lib/report.ts';
import { createTokens, imageNodeFlags, removeDir, startGatewayServer, tempDir } from './lib/stack.ts';
import { buildTemplates } from './lib/workload.ts';

const options = parseArgs(
  {
    runs: 5,
    duration: 12,
    warmup: 0,
    connections: 256,
    clientIps: 1000,
    projects: 8,
    memoryLimit: 0,
    withoutImageFlags: false,
  },
  process.argv.slice(2),
);
const log = (message: string) => process.stderr.write(`[bench:gateway-memory] ${message}\n`);

/** Resident KiB of a process by kind of mapping, from /proc/<pid>/smaps. */
function residentByMapping(pid: number): Record<string, number> | null {
  let smaps: string;
  try {
    smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null; // it has ended (killed for want of memory, in a cgroup)
  }
  const groups: Record<string, number> = {};
  let group = 'anonymous';
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const name = (header[1] ?? '').trim();
      if (name === '') group = 'anonymous (V8 heaps, buffers, thread stacks)';
      else if (name === '[heap]') group = 'C heap ([heap])';
      else if (name.startsWith('[')) group = 'other kernel mappings';
      else if (name.endsWith('/log/records.mdb')) group = 'record log (LMDB records.mdb)';
      else if (name.endsWith('.mdb')) group = 'other LMDB files';
      else if (/\/node$/.test(name)) group = 'node binary';
      else if (name.endsWith('.mmdb')) group = 'IP database';
      else if (name.endsWith('.node')) group = 'native addons';
      else group = 'other files (shared libraries)';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) groups[group] = (groups[group] ?? 0) + Number(rss[1]);
  }
  return groups;
}

const toMiB = (groups: Record<string, number> | null) =>
  groups &&
  Object.fromEntries(
    Object.entries(groups)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, round1(v / 1024)]),
  );

async function main() {
  const before = loadSnapshot();
  const dataDir = tempDir('gateway-memory');
  onInterrupt(async () => removeDir(dataDir));
  const tokens = await createTokens(options.projects, { dataDir });
  const templates = buildTemplates({ tokens, clientIps: options.clientIps });
  const monitor = new Monitor(100);
  const group: MemoryCgroup | null =
    options.memoryLimit > 0 ? createMemoryCgroup(`tally-bench-${process.pid}`, options.memoryLimit) : null;
  if (group) onInterrupt(async () => group.remove());
  const gateway = await startGatewayServer(
    { TALLY_DATA_DIR: dataDir },
    { cgroup: group?.dir, imageFlags: !options.withoutImageFlags },
  );
  const pid = gateway.child.pid;
  let killed: string | null = null;
  gateway.child.exited.then((code) => {
    killed = `the gateway ended (exit code ${code}) during the runs`;
  });
  monitor.watch('gateway', pid);
  const atStart = toMiB(residentByMapping(pid));
  log(`gateway ${gateway.url} (pid ${pid}); resident at start ${JSON.stringify(atStart)}`);
  let loops: number | null = null;
  const runs = [];
  try {
    for (let r = 1; r <= options.runs; r++) {
      const load = startLoad({
        mode: 'max',
        url: gateway.url,
        path: '/api/ingest',
        connections: options.connections,
        warmupS: options.warmup,
        durationS: options.duration,
        templates,
      });
      monitor.watch('load generator', load.child.pid);
      const result = await load.result;
      const usage = monitor.window(result.startedAt - 1000, Date.now());
      monitor.unwatch('load generator');
      const own = usage.processes.gateway;
      const run = {
        run: r,
        acceptedRps: result.acceptedRps,
        statuses: result.statuses,
        latencyMs: result.latencyMs,
        gatewayCpuPercent: own?.cpuPercent ?? null,
        peakRssMiB: own?.peakRssMiB ?? null,
        peakRssAnonMiB: own?.peakRssAnonMiB ?? null,
        peakRssFileMiB: own?.peakRssFileMiB ?? null,
        residentAfterMiB: toMiB(residentByMapping(pid)),
        logFileMiB: round1(logSize(dataDir) / 1024 / 1024),
        ...(group && { cgroupPeakMiB: group.peakMiB(), oomKills: group.oomKills() }),
      };
      log(
        `run ${r}: ${run.acceptedRps} req/s, p99 ${run.latencyMs.p99} ms, RssAnon ${run.peakRssAnonMiB} MiB, ` +
          `RssFile ${run.peakRssFileMiB} MiB, log ${run.logFileMiB} MiB`,
      );
      runs.push(run);
      loops ??= await eventLoops(gateway.adminUrl);
      if (killed) {
        log(`${killed}: ${group ? `${group.oomKills()} OOM kill(s) in the cgroup` : ''}`);
        break;
      }
    }
    const anonPeaks = runs.map((r) => r.peakRssAnonMiB ?? 0);
    const last = runs.at(-1);
    const lastFile = last
      ? Object.entries(last.residentAfterMiB ?? {})
          .filter(
            ([k]) => !k.startsWith('anonymous') && !k.startsWith('C heap') && !k.startsWith('other kernel'),
          )
          .reduce((sum, [, v]) => sum + v, 0)
      : 0;
    const later = runs.slice(1);
    const result = {
      bench: 'gateway-memory',
      machine: machineInfo(),
      settings: {
        ...options,
        node: process.version,
        // The gateway's own settings that weigh on its memory, as its environment gives them.
        GEO_DATABASE: process.env.GEO_DATABASE ?? 'city (default)',
        GATEWAY_WORKERS: process.env.GATEWAY_WORKERS ?? '0 (default: one per core)',
        nodeFlags: options.withoutImageFlags ? [] : imageNodeFlags(),
      },
      ...(group && {
        container: {
          cgroup: `v${group.version}`,
          memoryLimitMiB: group.limitMiB,
          peakMiB: group.peakMiB(),
          oomKills: group.oomKills(),
          gatewayEnded: killed,
        },
      }),
      eventLoops: loops,
      residentAtStartMiB: atStart,
      runs,
      highWaterRssMiB: highWaterMiB(pid),
      // None is met by a gateway the kernel killed.
      targets: killed
        ? { met: false, why: killed }
        : {
            peakRssAnon: atMost(150, Math.max(...anonPeaks), ' MiB'),
            rssAnonGrowthPercent: atMost(
              10,
              round1(((anonPeaks.at(-1) ?? 0) / Math.max(1, anonPeaks[1] ?? anonPeaks[0] ?? 1) - 1) * 100),
              '%',
            ),
            rssFileAfterLastRun: atMost(150, round1(lastFile), ' MiB'),
            p99AfterFirstRun: atMost(100, Math.max(...later.map((r) => r.latencyMs.p99)), ' ms'),
          },
      machineLoad: { before, after: loadSnapshot([pid]) },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    monitor.stop();
    await stopAll();
    removeDir(dataDir);
    group?.remove();
  }
}

/** How many event loops served (the `worker` labels of tally_gateway_admitted_total on its admin port). */
async function eventLoops(adminUrl: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    const workers = new Set(
      text
        .split('\n')
        .filter((line) => line.startsWith('tally_gateway_admitted_total'))
        .map((line) => /worker="([^"]*)"/.exec(line)?.[1]),
    );
    return Math.max(1, workers.size);
  } catch {
    return null; // it has ended
  }
}

function logSize(dataDir: string): number {
  try {
    return statSync(`${dataDir}/log/records.mdb`).size;
  } catch {
    return 0;
  }
}

await main();
