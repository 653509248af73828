// The processes a benchmark starts (servers under test, load generators), tracked so that every one is
// killed at the end: after a normal run, on an error, and on SIGINT/SIGTERM of the benchmark itself.
// Also samples a process's memory (RSS from /proc/<pid>/status) while it runs.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { machineBusySeconds, processCpuSeconds } from './machine.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  /** Everything the process printed so far (stdout and stderr, interleaved). */
  output(): string;
  /** Its stdout alone. */
  stdout(): string;
  /** Resolves with the first match of `pattern` in the output; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<number | null>;
}

const running = new Set<Child>();

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Echo the child's stderr to ours as it comes (for long runs that someone watches). */
  echoStderr?: boolean;
  /** Start it in a process group of its own (to signal a tree of processes, such as npm's). */
  detached?: boolean;
  /**
   * Start it inside this cgroup (a directory: lib/cgroup.ts), from its first instruction, as in a container:
   * a shell writes its own pid into the group and execs the command, so the pid is the command's.
   */
  cgroup?: string;
}

export function startChild(name: string, command: string, args: string[], options: StartOptions = {}): Child {
  const inGroup = options.cgroup
    ? ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', options.cgroup, command, ...args]
    : null;
  const child = spawn(inGroup ? '/bin/sh' : command, inGroup ?? args, {
    cwd: ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  if (child.pid === undefined) throw new Error(`could not start ${name} (${command})`);
  let output = '';
  let stdout = '';
  child.stdout?.on('data', (data: Buffer) => {
    output += data;
    stdout += data;
  });
  child.stderr?.on('data', (data: Buffer) => {
    output += data;
    if (options.echoStderr) process.stderr.write(data);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const tracked: Child = {
    name,
    process: child,
    pid: child.pid,
    output: () => output,
    stdout: () => stdout,
    exited,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return false;
          cleanup();
          resolve(match);
          return true;
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${name} printed nothing matching ${pattern} in ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const onExit = (code: number | null) => {
          if (check()) return;
          cleanup();
          reject(new Error(`${name} exited (${code}) before printing ${pattern}:\n${output}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          child.stdout?.off('data', check);
          child.stderr?.off('data', check);
          child.off('exit', onExit);
        };
        if (check()) return;
        child.stdout?.on('data', check);
        child.stderr?.on('data', check);
        child.once('exit', onExit);
      });
    },
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(tracked);
      return exited;
    },
  };
  running.add(tracked);
  exited.then(() => running.delete(tracked));
  return tracked;
}

/** Stops every child still running (SIGTERM, then SIGKILL). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop(5_000)));
}

let installed = false;
const cleanups: Array<() => Promise<void>> = [];

/** Runs `cleanup` (e.g. stopping services the benchmark started) if the benchmark is interrupted. */
export function onInterrupt(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

/**
 * Makes sure no child outlives the benchmark: SIGINT/SIGTERM stop them all (and run the onInterrupt
 * cleanups) and exit, and a last synchronous SIGKILL on exit catches whatever an error path left behind.
 */
export function killChildrenOnExit(): void {
  if (installed) return;
  installed = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the benchmark's processes\n`);
      stopAll()
        .then(async () => {
          for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
        })
        .finally(() => process.exit(130));
    });
  }
  process.once('exit', () => {
    for (const child of running) child.process.kill('SIGKILL');
  });
}

/**
 * Node running a TypeScript entry point from the sources (tsx, and the export condition that resolves the
 * workspace packages to their src/), as in development.
 */
export function startNode(
  name: string,
  entry: string,
  args: string[] = [],
  options: StartOptions & { nodeArgs?: string[] } = {},
): Child {
  return startChild(
    name,
    process.execPath,
    [...(options.nodeArgs ?? []), '--conditions=@tally/source', '--import', 'tsx', entry, ...args],
    options,
  );
}

/** Node running compiled JavaScript (a dist/ entry point), as production does: no tsx, no export condition. */
export function startCompiled(
  name: string,
  entry: string,
  args: string[] = [],
  options: StartOptions & { nodeArgs?: string[] } = {},
): Child {
  return startChild(name, process.execPath, [...(options.nodeArgs ?? []), entry, ...args], options);
}

export interface ProcessUsage {
  /** CPU used in the window, in % of one core (200 = both cores of a 2-core machine). */
  cpuPercent: number;
  /** Highest VmRSS sampled in the window, in MiB. */
  peakRssMiB: number;
  /** Highest RssAnon (heap, stacks: the process's own memory) sampled in the window, in MiB. */
  peakRssAnonMiB: number;
  /** Highest RssFile (mapped file pages, e.g. an LMDB map: page cache the kernel can reclaim), in MiB. */
  peakRssFileMiB: number;
}

export interface WindowUsage {
  /** Per watched process, by name. */
  processes: Record<string, ProcessUsage>;
  /** The whole machine's busy CPU in the window, in % of one core. */
  machineCpuPercent: number;
  /** What the machine ran besides the watched processes (other engineers' work, Kafka, Redis…). */
  otherCpuPercent: number;
}

interface Memory {
  rss: number;
  anon: number;
  file: number;
}

interface Sample {
  t: number;
  machine: number;
  cpu: Map<string, number>;
  rss: Map<string, Memory>;
}

/**
 * Samples, every `intervalMs`, the CPU time and RSS (VmRSS from /proc/<pid>/status) of the processes it
 * watches and the machine's busy time, so that any window of a run (a measured phase) can be read back.
 */
export class Monitor {
  readonly #watched = new Map<string, number>();
  readonly #samples: Sample[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(intervalMs = 100) {
    this.#timer = setInterval(() => this.#sample(), intervalMs);
    this.#sample();
  }

  watch(name: string, pid: number): void {
    this.#watched.set(name, pid);
    this.#sample();
  }

  unwatch(name: string): void {
    this.#sample();
    this.#watched.delete(name);
  }

  #sample(): void {
    const sample: Sample = { t: Date.now(), machine: machineBusySeconds(), cpu: new Map(), rss: new Map() };
    for (const [name, pid] of this.#watched) {
      const cpu = processCpuSeconds(pid);
      const rss = memoryKiB(pid);
      if (cpu !== null) sample.cpu.set(name, cpu);
      if (rss !== null) sample.rss.set(name, rss);
    }
    this.#samples.push(sample);
  }

  /** Usage between two Unix-epoch milliseconds (the samples nearest inside the window). */
  window(from: number, to: number): WindowUsage {
    this.#sample();
    const inside = this.#samples.filter((s) => s.t >= from && s.t <= to);
    const first = inside[0];
    const last = inside.at(-1);
    const processes: Record<string, ProcessUsage> = {};
    if (!first || !last || last.t === first.t) {
      return { processes, machineCpuPercent: 0, otherCpuPercent: 0 };
    }
    const seconds = (last.t - first.t) / 1000;
    let watchedCpu = 0;
    for (const name of new Set([...first.cpu.keys(), ...last.cpu.keys()])) {
      const used = (last.cpu.get(name) ?? 0) - (first.cpu.get(name) ?? last.cpu.get(name) ?? 0);
      watchedCpu += used;
      const peak = { rss: 0, anon: 0, file: 0 };
      for (const s of inside) {
        const m = s.rss.get(name);
        if (!m) continue;
        peak.rss = Math.max(peak.rss, m.rss);
        peak.anon = Math.max(peak.anon, m.anon);
        peak.file = Math.max(peak.file, m.file);
      }
      processes[name] = {
        cpuPercent: Math.round((used / seconds) * 100),
        peakRssMiB: round1(peak.rss / 1024),
        peakRssAnonMiB: round1(peak.anon / 1024),
        peakRssFileMiB: round1(peak.file / 1024),
      };
    }
    const machine = last.machine - first.machine;
    return {
      processes,
      machineCpuPercent: Math.round((machine / seconds) * 100),
      otherCpuPercent: Math.max(0, Math.round(((machine - watchedCpu) / seconds) * 100)),
    };
  }

  /** The highest RSS (and its anonymous and file-backed parts) sampled of a process over the whole run, in MiB. */
  peakRss(name: string): { rssMiB: number; anonMiB: number; fileMiB: number } {
    const peak = { rss: 0, anon: 0, file: 0 };
    for (const s of this.#samples) {
      const m = s.rss.get(name);
      if (!m) continue;
      peak.rss = Math.max(peak.rss, m.rss);
      peak.anon = Math.max(peak.anon, m.anon);
      peak.file = Math.max(peak.file, m.file);
    }
    return {
      rssMiB: round1(peak.rss / 1024),
      anonMiB: round1(peak.anon / 1024),
      fileMiB: round1(peak.file / 1024),
    };
  }

  /**
   * The RSS of a process over time: per `stepMs` from `from` (Unix-epoch ms), the highest sample's
   * seconds since `from`, RSS, anonymous and file-backed parts, in MiB; so that a run shows whether memory
   * levels off or keeps growing.
   */
  rssCurve(name: string, from: number, stepMs = 10_000): Array<[number, number, number, number]> {
    const steps = new Map<number, Memory>();
    for (const s of this.#samples) {
      const m = s.rss.get(name);
      if (!m || s.t < from) continue;
      const step = Math.floor((s.t - from) / stepMs);
      const peak = steps.get(step);
      if (!peak || m.rss > peak.rss) steps.set(step, m);
    }
    return [...steps]
      .sort(([a], [b]) => a - b)
      .map(([step, m]) => [
        ((step + 1) * stepMs) / 1000,
        round1(m.rss / 1024),
        round1(m.anon / 1024),
        round1(m.file / 1024),
      ]);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

function memoryKiB(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') + field('RssShmem') };
  } catch {
    return null;
  }
}

/** The kernel's high-water mark of a process's RSS (VmHWM: the peak since it started), in MiB. */
export function highWaterMiB(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return round1(Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    return null;
  }
}

export const round1 = (n: number) => Math.round(n * 10) / 10;
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
