// Runs the load generator (bench/lib/load-generator.ts) as a separate process and reads its result, so
// that the server under test and the generator never share an event loop.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, startNode } from './children.ts';
import type { RequestTemplate } from './workload.ts';

export interface LoadJob {
  /**
   * max: closed loop at full speed (autocannon or wrk); fixed: open loop at `rate`; clients: closed loop of
   * clients that wait Retry-After on a 503 or 429 and send the same request again, as the SDKs do
   * (bench/lib/retrying-clients.ts).
   */
  mode: 'max' | 'fixed' | 'clients';
  /**
   * Mode max's generator: autocannon (Node.js, the default) or wrk (C, bench/lib/wrk.ts).
   * Mode fixed always uses bench/lib/fixed-rate.ts.
   */
  generator?: 'wrk' | 'autocannon';
  /** Base URL of the server, e.g. http://127.0.0.1:8080 */
  url: string;
  path: string;
  connections: number;
  /** Seconds sent before measuring (not counted). */
  warmupS: number;
  durationS: number;
  /** Requests per second, for mode fixed. */
  rate?: number;
  templates: RequestTemplate[];
  /**
   * Requests each client IP sends before it leaves for good (X-Forwarded-For from 198.18.0.0/15, the
   * range kept for benchmarks): visitors that come and go, as on a site. `activeIps` IPs send at a time,
   * in turn (so that the requests in flight at once come from as many IPs, as on a site), and are then
   * replaced by as many new ones. 0 (default): each template keeps its IP, so the same few thousand
   * visitors send for the whole run.
   */
  requestsPerIp?: number;
  /** With requestsPerIp: how many IPs send at a time (default 1000). */
  activeIps?: number;
}

export interface Latencies {
  p50: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
  mean: number;
}

export interface LoadResult {
  mode: 'max' | 'fixed' | 'clients';
  connections: number;
  durationS: number;
  targetRate: number | null;
  /** Responses received during the measured period. */
  completed: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Requests answered per second (any status). */
  rps: number;
  /** Requests answered 2xx per second. */
  acceptedRps: number;
  /** Latency percentiles in ms (mode max: autocannon's, 2xx only, 1 ms resolution). */
  latencyMs: Latencies;
  /** Mode fixed: scheduled requests never sent (the server fell behind the rate). */
  unsent?: number;
  /** Mode fixed: time from write to response, without the queueing behind a busy connection. */
  serviceTimeMs?: Latencies;
  /** Mode fixed: latency (from when each was due) of the 2xx answers alone. */
  acceptedLatencyMs?: Latencies;
  /** Mode clients: refusals (503, 429) answered by waiting Retry-After and sending the request again. */
  retried?: number;
  /** Mode clients: from a request's first send to its acknowledgement, retries included. */
  acknowledgedAfterMs?: Latencies;
  /** First and last millisecond (Unix epoch) of the measured period. */
  startedAt: number;
  endedAt: number;
}

export interface RunningLoad {
  child: Child;
  result: Promise<LoadResult>;
}

/** Starts the generator; `result` resolves with its JSON once it has finished. */
export function startLoad(job: LoadJob): RunningLoad {
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-load-'));
  const file = join(dir, 'job.json');
  writeFileSync(file, JSON.stringify(job));
  const child = startNode('load generator', 'bench/lib/load-generator.ts', [file]);
  const result = child.exited.then((code) => {
    rmSync(dir, { recursive: true, force: true });
    const line = child.stdout().trim().split('\n').at(-1) ?? '';
    if (code !== 0 || !line.startsWith('{')) {
      throw new Error(`load generator failed (exit ${code}):\n${child.output()}`);
    }
    return JSON.parse(line) as LoadResult;
  });
  result.catch(() => {}); // the caller awaits it; never an unhandled rejection meanwhile
  return { child, result };
}
