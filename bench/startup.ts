// Start-up and memory benchmark (`npm run bench:startup`): the gateway alone (the image's command) and
// `npm start`'s all-in-one process, each run compiled (dist/ with plain Node, as production runs them) and
// from the sources (tsx, as before the build step), alternating, `--repeat` times, on the embedded defaults:
//   start-up   from the spawn to its readiness file (TALLY_READY_FILE: for npm start's process, once the
//              migrations ran, the consumers started and the warehouse is served);
//   idle       VmRSS (and its anonymous and file-backed parts) `--idle-seconds` after start-up;
//   loaded     the highest VmRSS during `--load-seconds` of the benchmark's traffic at full speed
//              (autocannon, `--connections`, a separate process), and the 202s per second it got.
// With `--npm-start`, also the time `npm start` itself takes to the same point: npm, the build check
// (nothing to compile) and the compiled process. Prints one JSON object on stdout; progress on stderr.
//
//   node --conditions=@tally/source --import tsx bench/startup.ts [--repeat 5] [--idle-seconds 5]
//     [--load-seconds 10] [--connections 64] [--processes gateway,tally] [--npm-start]
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readReadiness } from '@tally/service';
import { buildIfStale } from '../scripts/build.mjs';
import { type Child, killChildrenOnExit, Monitor, ROOT, sleep, startChild, stopAll } from './lib/children.ts';
import { startLoad } from './lib/load.ts';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { parseArgs, spread } from './lib/report.ts';
import {
  createTokens,
  type Runtime,
  removeDir,
  type ServerProcess,
  serverEnv,
  startGatewayServer,
  startTallyServer,
  tempDir,
} from './lib/stack.ts';
import { buildTemplates } from './lib/workload.ts';

const options = parseArgs(
  {
    repeat: 5,
    idleSeconds: 5,
    loadSeconds: 10,
    connections: 64,
    processes: 'gateway,tally',
    npmStart: false,
  },
  process.argv.slice(2),
);
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Run {
  startupMs: number;
  idle: { rssMiB: number; anonMiB: number; fileMiB: number };
  loaded: { peakRssMiB: number; peakAnonMiB: number; peakFileMiB: number; accepted202PerSecond: number };
}

async function measure(kind: 'gateway' | 'tally', runtime: Runtime): Promise<Run> {
  const dataDir = tempDir(`startup-${kind}`);
  const monitor = new Monitor(100);
  let server: ServerProcess | null = null;
  try {
    const tokens = await createTokens(2, { dataDir });
    const env = { TALLY_DATA_DIR: dataDir, ...(kind === 'tally' && { UV_THREADPOOL_SIZE: '8' }) };
    const started = performance.now();
    server = await (kind === 'gateway' ? startGatewayServer : startTallyServer)(env, [], runtime);
    const startupMs = Math.round(performance.now() - started);
    monitor.watch(kind, server.child.pid);
    await sleep(options.idleSeconds * 1000);
    const idle = monitor.peakRss(kind); // only idle samples so far
    const load = startLoad({
      mode: 'max',
      url: server.url,
      path: '/api/ingest',
      connections: options.connections,
      warmupS: 0,
      durationS: options.loadSeconds,
      templates: buildTemplates({ tokens, clientIps: 100 }),
    });
    const result = await load.result;
    const window = monitor.window(result.startedAt, result.endedAt).processes[kind];
    return {
      startupMs,
      idle,
      loaded: {
        peakRssMiB: window?.peakRssMiB ?? 0,
        peakAnonMiB: window?.peakRssAnonMiB ?? 0,
        peakFileMiB: window?.peakRssFileMiB ?? 0,
        accepted202PerSecond: Math.round(result.acceptedRps),
      },
    };
  } finally {
    monitor.stop();
    await server?.child.stop();
    removeDir(dataDir);
  }
}

/** `npm start` from the spawn to its readiness: npm, the build check, then the compiled process. */
async function npmStart(): Promise<number> {
  const dataDir = tempDir('startup-npm');
  const readyFile = join(dataDir, 'ready.json');
  const started = performance.now();
  // npm runs prestart and start in shells of their own: stop the whole process group afterwards.
  const child: Child = startChild('npm start', 'npm', ['start'], {
    env: serverEnv({ TALLY_DATA_DIR: dataDir, WAREHOUSE_HTTP_PORT: '0', TALLY_READY_FILE: readyFile }),
    detached: true,
  });
  try {
    // The file names the node process's pid, not npm's: any readiness in this run's own file counts.
    while (!readReadiness(readyFile)) {
      if (child.process.exitCode !== null) throw new Error(`npm start exited:\n${child.output()}`);
      if (performance.now() - started > 120_000)
        throw new Error(`npm start was not ready:\n${child.output()}`);
      await sleep(20);
    }
    return Math.round(performance.now() - started);
  } finally {
    process.kill(-child.pid, 'SIGTERM');
    await child.exited;
    removeDir(dataDir);
  }
}

killChildrenOnExit();
buildIfStale(ROOT);
const before = loadSnapshot();
const results: Record<string, Record<string, Run[]>> = {};
const npmStarts: number[] = [];
try {
  for (let repeat = 1; repeat <= options.repeat; repeat++) {
    for (const kind of options.processes.split(',') as Array<'gateway' | 'tally'>) {
      // Alternate which runtime goes first, so that a drift of the machine does not favour one.
      const order: Runtime[] = repeat % 2 ? ['compiled', 'sources'] : ['sources', 'compiled'];
      for (const runtime of order) {
        const run = await measure(kind, runtime);
        const byRuntime = results[kind] ?? {};
        byRuntime[runtime] = [...(byRuntime[runtime] ?? []), run];
        results[kind] = byRuntime;
        log(`${repeat}/${options.repeat} ${kind} ${runtime}: ${JSON.stringify(run)}`);
      }
    }
    if (options.npmStart) {
      npmStarts.push(await npmStart());
      log(`${repeat}/${options.repeat} npm start: ${npmStarts.at(-1)} ms`);
    }
  }
} finally {
  await stopAll();
}

const summary = Object.fromEntries(
  Object.entries(results).map(([kind, byRuntime]) => [
    kind,
    Object.fromEntries(
      Object.entries(byRuntime).map(([runtime, runs]) => [
        runtime,
        {
          startupMs: spread(runs.map((r) => r.startupMs)),
          idleRssMiB: spread(runs.map((r) => r.idle.rssMiB)),
          idleAnonMiB: spread(runs.map((r) => r.idle.anonMiB)),
          idleFileMiB: spread(runs.map((r) => r.idle.fileMiB)),
          loadedPeakRssMiB: spread(runs.map((r) => r.loaded.peakRssMiB)),
          loadedPeakAnonMiB: spread(runs.map((r) => r.loaded.peakAnonMiB)),
          accepted202PerSecond: spread(runs.map((r) => r.loaded.accepted202PerSecond)),
        },
      ]),
    ),
  ]),
);
console.log(
  JSON.stringify(
    {
      machine: machineInfo(),
      load: { before, after: loadSnapshot() },
      options,
      ...summary,
      ...(npmStarts.length && { npmStartMs: spread(npmStarts) }),
    },
    null,
    2,
  ),
);
