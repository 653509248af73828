// The closed-loop load generator in C that the issue's own measurements used: wrk (Debian's `wrk`
// package), two threads, sending the workload's templates through a Lua script that fills in each
// request's record id as load-generator.ts does. An alternative to autocannon for mode max
// (`bench:overload --generator wrk`): on two cores the generator shares the machine with the server it
// measures, and the ratios to the ceiling depend on which one it is (BENCHMARKS.md).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Latencies, LoadJob, LoadResult } from './load.ts';

/** The wrk binary: $WRK, else `wrk` on the PATH; null when there is none. */
export function wrkBinary(): string | null {
  const binary = process.env.WRK ?? 'wrk';
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return probe.error ? null : binary;
}

const lua = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`;

/**
 * The Lua script: the templates as Lua strings, one request per call of `request()` in turn, each with a
 * record id made unique by the generator's prefix, the thread and a counter (a valid UUID, as the
 * contract wants), and `done()` printing the result as one JSON line.
 */
export function wrkScript(job: LoadJob, prefix: string): string {
  const templates = job.templates.map((t) => {
    const headers = Object.entries(t.headers)
      .map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
      .join(', ');
    const parts = t.parts.map(lua).join(', ');
    return `{ headers = { ${headers} }, parts = { ${parts} } }`;
  });
  return `
local templates = { ${templates.join(',\n')} }
local path = ${lua(job.path)}
local prefix = ${lua(prefix)}
local threads = {}
local thread_id = 0
local seq = 0

function setup(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end

function request()
  seq = seq + 1
  local t = templates[(seq + thread_id * 7919) % #templates + 1]
  local counter = string.format("%x%011x", thread_id, seq)
  local id = prefix .. "-0000-7000-8000-" .. counter
  local parts = t.parts
  local body = parts[1]
  for i = 2, #parts, 2 do
    if parts[i] == "@@id@@" then body = body .. id else body = body .. prefix .. counter end
    body = body .. parts[i + 1]
  end
  return wrk.format("POST", path, t.headers, body)
end

function done(summary, latency, requests)
  local p = function(q) return latency:percentile(q) / 1000 end
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"non2xx":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,' ..
    '"p50":%.3f,"p90":%.3f,"p99":%.3f,"p99_9":%.3f,"max":%.3f,"mean":%.3f}\\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, p(50), p(90), p(99), p(99.9), latency.max / 1000,
    latency.mean / 1000))
end
`;
}

/** What done() prints: counts, and latencies in ms. */
interface WrkSummary extends Latencies {
  requests: number;
  durationUs: number;
  non2xx: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
}

function runOnce(binary: string, script: string, job: LoadJob, durationS: number): Promise<WrkSummary> {
  const args = [
    '-t',
    '2',
    '-c',
    String(job.connections),
    '-d',
    `${durationS}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    `${job.url}${job.path}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
      if (code !== 0 || !line) reject(new Error(`wrk failed (exit ${code}):\n${out}`));
      else resolve(JSON.parse(line) as WrkSummary);
    });
  });
}

/**
 * Mode max with wrk: two threads, `connections` keep-alive connections, closed loop. wrk counts the
 * answers that are not 2xx or 3xx without their statuses; the gateway's are 503s (shed) in this
 * benchmark, so they are reported as such. Latencies are of every answer, in ms (µs resolution).
 */
export async function runWrk(job: LoadJob, prefix: string): Promise<LoadResult> {
  const binary = wrkBinary();
  if (!binary) throw new Error('wrk is not installed: apt-get install wrk, or set WRK to its path');
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-wrk-'));
  const script = join(dir, 'requests.lua');
  writeFileSync(script, wrkScript(job, prefix));
  try {
    if (job.warmupS > 0) await runOnce(binary, script, job, job.warmupS);
    const startedAt = Date.now();
    const r = await runOnce(binary, script, job, job.durationS);
    const endedAt = Date.now();
    const seconds = r.durationUs / 1e6;
    const accepted = r.requests - r.non2xx;
    const statuses: Record<string, number> = { '2xx': accepted };
    if (r.non2xx) statuses['non-2xx'] = r.non2xx;
    const round = (ms: number) => Math.round(ms * 100) / 100;
    return {
      mode: 'max',
      connections: job.connections,
      durationS: Math.round(seconds * 10) / 10,
      targetRate: null,
      completed: r.requests,
      statuses,
      errors: r.connect + r.read + r.write,
      timeouts: r.timeout,
      rps: Math.round(r.requests / seconds),
      acceptedRps: Math.round(accepted / seconds),
      latencyMs: {
        p50: round(r.p50),
        p90: round(r.p90),
        p99: round(r.p99),
        p99_9: round(r.p99_9),
        max: round(r.max),
        mean: round(r.mean),
      },
      startedAt,
      endedAt,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
