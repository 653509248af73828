// The load generator, run as its own process so that it never shares an event loop with the server it
// measures: `node --conditions=@tally/source --import tsx bench/lib/load-generator.ts <job.json>` prints one JSON object (its
// result) on stdout. Two modes:
//   max    closed loop: `connections` clients, each sending its next request as soon as the previous one
//          is answered, for the highest throughput the server sustains; with wrk (bench/lib/wrk.ts, run as
//          this process's child) or autocannon (in this process).
//   fixed  open loop at `rate` requests per second (bench/lib/fixed-rate.ts), for latency at a load.
// Both send the workload's templates in turn, each with a fresh record id.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { percentiles, runFixedRate } from './fixed-rate.ts';
import type { LoadJob, LoadResult } from './load.ts';
import { runRetryingClients } from './retrying-clients.ts';
import { type RequestTemplate, renderBody } from './workload.ts';
import { runWrk } from './wrk.ts';

async function main(): Promise<void> {
  const job = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as LoadJob;
  const prefix = randomBytes(4).toString('hex');
  let seq = 0;
  const perIp = job.requestsPerIp ?? 0;
  const active = job.activeIps ?? 1000;
  const next = () => {
    const template = job.templates[seq % job.templates.length] as RequestTemplate;
    const headers =
      perIp > 0 && template.headers['x-forwarded-for'] !== undefined
        ? { ...template.headers, 'x-forwarded-for': benchmarkIp(clientOf(seq, perIp, active)) }
        : template.headers;
    return { headers, body: renderBody(template, prefix, seq++) };
  };
  const result =
    job.mode === 'fixed'
      ? await runFixed(job, next)
      : job.mode === 'clients'
        ? await runClients(job, next)
        : job.generator === 'wrk'
          ? await runWrk(job, prefix)
          : await runMax(job, next);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function runMax(
  job: LoadJob,
  next: () => { headers: Record<string, string>; body: string },
): Promise<LoadResult> {
  const run = (durationS: number) =>
    autocannon({
      url: job.url,
      connections: job.connections,
      duration: durationS,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          path: job.path,
          setupRequest: (request) => {
            const { headers, body } = next();
            return { ...request, method: 'POST', path: job.path, headers, body };
          },
        },
      ],
    });
  if (job.warmupS > 0) await run(job.warmupS);
  const startedAt = Date.now();
  const r = await run(job.durationS);
  const endedAt = Date.now();
  const statuses = Object.fromEntries(
    Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, (s as { count: number }).count]),
  );
  const completed = Object.values(statuses).reduce((a, b) => a + b, 0);
  const seconds = (endedAt - startedAt) / 1000;
  const accepted = Object.entries(statuses)
    .filter(([code]) => code.startsWith('2'))
    .reduce((a, [, n]) => a + n, 0);
  const l = r.latency as unknown as Record<string, number>;
  return {
    mode: 'max',
    connections: job.connections,
    durationS: Math.round(seconds * 10) / 10,
    targetRate: null,
    completed,
    statuses,
    errors: r.errors,
    timeouts: r.timeouts,
    rps: Math.round(completed / seconds),
    acceptedRps: Math.round(accepted / seconds),
    latencyMs: {
      p50: l.p50 ?? 0,
      p90: l.p90 ?? 0,
      p99: l.p99 ?? 0,
      p99_9: l.p99_9 ?? 0,
      max: l.max ?? 0,
      mean: Math.round((l.average ?? 0) * 100) / 100,
    },
    startedAt,
    endedAt,
  };
}

async function runFixed(
  job: LoadJob,
  next: () => { headers: Record<string, string>; body: string },
): Promise<LoadResult> {
  const target = new URL(job.url);
  const base = {
    host: target.hostname,
    port: Number(target.port),
    path: job.path,
    rate: job.rate ?? 1000,
    connections: job.connections,
    next,
  };
  if (job.warmupS > 0) await runFixedRate({ ...base, durationS: job.warmupS });
  // The latencies of the 2xx answers alone: under admission control the shed 503s are fast and would
  // flatter the percentiles of what was accepted.
  const acceptedMs: number[] = [];
  const onResponse = (status: number, scheduledAt: number, doneAt: number) => {
    if (status >= 200 && status < 300) acceptedMs.push(doneAt - scheduledAt);
  };
  const startedAt = Date.now();
  const r = await runFixedRate({ ...base, durationS: job.durationS, onResponse });
  const endedAt = Date.now();
  const accepted = Object.entries(r.statuses)
    .filter(([code]) => code.startsWith('2'))
    .reduce((a, [, n]) => a + n, 0);
  return {
    mode: 'fixed',
    connections: job.connections,
    durationS: job.durationS,
    targetRate: r.targetRate,
    completed: r.completed,
    statuses: r.statuses,
    errors: r.errors,
    timeouts: 0,
    rps: r.achievedRate,
    acceptedRps: Math.round(accepted / job.durationS),
    latencyMs: r.latencyMs,
    unsent: r.unsent,
    serviceTimeMs: r.serviceTimeMs,
    acceptedLatencyMs: percentiles(Float64Array.from(acceptedMs)),
    startedAt,
    endedAt,
  };
}

/**
 * Which client sends the `seq`-th request: `active` clients in turn, each sending `perIp` requests over
 * its window of active × perIp requests, then replaced by `active` new ones.
 */
function clientOf(seq: number, perIp: number, active: number): number {
  return Math.floor(seq / (active * perIp)) * active + (seq % active);
}

/** The n-th address of 198.18.0.0/15 (RFC 2544's range for benchmarks), cycling. */
function benchmarkIp(n: number): string {
  const i = n % 131_072;
  return `198.${18 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
}

async function runClients(
  job: LoadJob,
  next: () => { headers: Record<string, string>; body: string },
): Promise<LoadResult> {
  const target = new URL(job.url);
  const r = await runRetryingClients({
    host: target.hostname,
    port: Number(target.port),
    path: job.path,
    connections: job.connections,
    durationS: job.durationS,
    next,
  });
  const completed = Object.values(r.statuses).reduce((a, b) => a + b, 0);
  const { p95: _p95, ...acknowledgedAfter } = r.acknowledgedAfterMs;
  return {
    mode: 'clients',
    connections: job.connections,
    durationS: r.durationS,
    targetRate: null,
    completed,
    statuses: r.statuses,
    errors: r.errors,
    timeouts: 0,
    rps: Math.round(completed / r.durationS),
    acceptedRps: Math.round(r.accepted / r.durationS),
    latencyMs: acknowledgedAfter,
    retried: r.retried,
    acknowledgedAfterMs: acknowledgedAfter,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
  };
}

await main();
