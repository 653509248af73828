// Shared by the benchmarks' entry points: command-line options, medians and spreads of repeated runs,
// target checks that say by how much a figure misses, and what bound a phase by CPU (measured).
import type { WindowUsage } from './children.ts';

/** `--name value` and `--flag` options; unknown names are refused so that a typo is not ignored. */
export function parseArgs<T extends Record<string, string | number | boolean>>(
  defaults: T,
  argv: string[],
): T {
  const options: Record<string, string | number | boolean> = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const name = arg.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!(name in defaults))
      throw new Error(`unknown option ${arg}; options: ${Object.keys(defaults).join(', ')}`);
    const fallback = defaults[name];
    if (typeof fallback === 'boolean') {
      options[name] = true;
    } else {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      options[name] = typeof fallback === 'number' ? Number(value) : value;
    }
  }
  return options as T;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  /** (max − min) / median, in %. */
  spreadPercent: number;
  runs: number[];
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  const min = sorted[0] ?? 0;
  const max = sorted.at(-1) ?? 0;
  return {
    median: Math.round(median * 100) / 100,
    min,
    max,
    spreadPercent: median ? Math.round(((max - min) / median) * 1000) / 10 : 0,
    runs: [...values],
  };
}

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
  /** How far off, when missed ("18.3 points short", "4.2 ms over"). */
  missedBy?: string;
}

/** A figure that must be at least `target`; `gapUnit` names the shortfall's unit (default: `unit`). */
export function atLeast(
  target: number,
  measured: number,
  unit: string,
  digits = 1,
  gapUnit = unit,
): TargetCheck | NotMeasured {
  if (!Number.isFinite(measured)) return NOT_MEASURED;
  const met = measured >= target;
  const f = (n: number, u = unit) => `${n.toFixed(digits)}${u}`;
  return {
    target: `≥ ${f(target)}`,
    measured: f(measured),
    met,
    ...(met
      ? {}
      : {
          missedBy: `${f(target - measured, gapUnit)} short (${((measured / target) * 100).toFixed(0)}% of the target)`,
        }),
  };
}

export interface NotMeasured {
  target: string;
  measured: 'not measured';
  met: null;
}
const NOT_MEASURED: NotMeasured = { target: '', measured: 'not measured', met: null };

/** A figure that must be at most `target`. */
export function atMost(
  target: number,
  measured: number,
  unit: string,
  digits = 1,
): TargetCheck | NotMeasured {
  if (!Number.isFinite(measured)) return NOT_MEASURED;
  const met = measured <= target;
  const f = (n: number) => `${n.toFixed(digits)}${unit}`;
  return {
    target: `≤ ${f(target)}`,
    measured: f(measured),
    met,
    ...(met
      ? {}
      : {
          missedBy: `${f(measured - target)} over (${((measured / target) * 100).toFixed(0)}% of the target)`,
        }),
  };
}

/**
 * What bound a saturated phase, read from the CPU it used: a Node server whose main thread is near one
 * core is bound by its event loop; a machine near all its cores is bound by the machine (generator,
 * server and anything else share it). Only what was measured; the profile says which code.
 */
export function cpuBound(usage: WindowUsage, server: string, cores: number): string {
  const serverCpu = usage.processes[server]?.cpuPercent ?? 0;
  const generator = usage.processes['load generator']?.cpuPercent ?? 0;
  const services = ['kafka broker', 'redis', 'schema registry']
    .filter((name) => usage.processes[name])
    .map((name) => `${name} ${usage.processes[name]?.cpuPercent}%`);
  const parts = [
    `${server} ${serverCpu}% CPU`,
    `load generator ${generator}%`,
    ...services,
    `everything else ${usage.otherCpuPercent}%`,
    `machine ${usage.machineCpuPercent}% of ${cores * 100}%`,
  ].join(', ');
  if (usage.machineCpuPercent >= cores * 100 * 0.9) return `all ${cores} cores busy (${parts})`;
  if (serverCpu >= 90) return `${server} at one core (${parts})`;
  return `not CPU-bound (${parts})`;
}

/** Cumulative bucket counts of a Prometheus histogram (`<name>_bucket{le="…"} n` lines), by upper bound. */
export async function histogramBuckets(metricsUrl: string, name: string): Promise<Map<number, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const buckets = new Map<number, number>();
  const pattern = new RegExp(`^${name}_bucket\\{[^}]*le="([^"]+)"[^}]*\\} (\\d+)`, 'gm');
  for (const match of text.matchAll(pattern)) {
    const le = match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(match[2]));
  }
  return buckets;
}

/**
 * Percentiles of the observations between two readings of a histogram, as the upper bound of the bucket
 * each falls in (so "≤ 2.5 ms"): what the server itself measured, without the network or the generator.
 */
export function bucketPercentiles(
  before: Map<number, number>,
  after: Map<number, number>,
  quantiles: readonly number[],
): { count: number; le: Record<string, number> } {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const count = counts.at(-1) ?? 0;
  const le: Record<string, number> = {};
  for (const q of quantiles) {
    const index = counts.findIndex((c) => c >= q * count);
    le[`p${String(q * 100).replace('.', '_')}`] = bounds[index] ?? Number.NaN;
  }
  return { count, le };
}
