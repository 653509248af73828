// A wrk2-style open-loop load generator: requests are scheduled at a fixed rate whatever the server does,
// sent over a pool of keep-alive HTTP/1.1 connections (one request in flight per connection), and each
// latency is measured from the time the request was *scheduled*, so a server that stalls is charged for
// every request that had to wait (no coordinated omission). autocannon's overallRate is not used for this:
// it sends each connection's quota for the second as fast as it can and then idles, so "50% load" is
// half a second at full speed, and its latencies have 1 ms resolution.
import { connect, type Socket } from 'node:net';

export interface FixedRateOptions {
  host: string;
  port: number;
  path: string;
  /** Requests per second. */
  rate: number;
  durationS: number;
  /** Keep-alive connections (requests queue when all are busy; the queueing counts in the latency). */
  connections: number;
  /** The next request's headers and body. */
  next(): { headers: Record<string, string>; body: string };
  /** Called on every response (status, when it was scheduled, when it completed), e.g. to track markers. */
  onResponse?(status: number, scheduledAt: number, doneAt: number, body: string): void;
}

export interface FixedRateResult {
  targetRate: number;
  durationS: number;
  /** Requests scheduled during the run. */
  scheduled: number;
  completed: number;
  /** Scheduled but never sent before the end: the server could not keep up with the rate. */
  unsent: number;
  statuses: Record<string, number>;
  errors: number;
  achievedRate: number;
  /** From the scheduled time to the response (what a client at that rate waits), in ms. */
  latencyMs: Percentiles;
  /** From the moment the request was written to the response, in ms. */
  serviceTimeMs: Percentiles;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p99_9: number;
  max: number;
  mean: number;
}

interface Connection {
  socket: Socket;
  busy: boolean;
  scheduledAt: number;
  sentAt: number;
  buffer: Buffer;
}

export async function runFixedRate(options: FixedRateOptions): Promise<FixedRateResult> {
  const expected = Math.ceil(options.rate * options.durationS * 1.05) + 16;
  const latencies = new Float64Array(expected);
  const serviceTimes = new Float64Array(expected);
  let completed = 0;
  let errors = 0;
  const statuses: Record<string, number> = {};
  const queue: number[] = []; // scheduled times of requests waiting for a free connection
  let scheduled = 0;
  let stopping = false;
  const idle: Connection[] = [];
  const connections: Connection[] = [];
  const now = () => performance.now();
  const hostHeader = `${options.host}:${options.port}`;

  const open = (): Promise<Connection> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: options.host, port: options.port, noDelay: true });
      const conn: Connection = { socket, busy: false, scheduledAt: 0, sentAt: 0, buffer: Buffer.alloc(0) };
      socket.once('connect', () => resolve(conn));
      // Before 'connect' an error fails the open; after it, 'close' follows and is handled there.
      socket.on('error', reject);
      socket.on('data', (data: Buffer) => onData(conn, data));
      socket.on('close', () => onClose(conn));
    });

  function onData(conn: Connection, data: Buffer): void {
    conn.buffer = conn.buffer.length ? Buffer.concat([conn.buffer, data]) : data;
    const response = takeResponse(conn.buffer);
    if (!response) return;
    const { head, status } = response;
    const body = response.body.toString('utf8');
    conn.buffer = response.rest;
    const done = now();
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (completed < expected) {
      latencies[completed] = done - conn.scheduledAt;
      serviceTimes[completed] = done - conn.sentAt;
    }
    completed++;
    options.onResponse?.(Number(status), conn.scheduledAt, done, body);
    conn.busy = false;
    if (/\r\nconnection:\s*close/i.test(head)) {
      conn.socket.destroy();
      return;
    }
    idle.push(conn);
    dispatch();
  }

  function onClose(conn: Connection): void {
    const index = connections.indexOf(conn);
    if (index >= 0) connections.splice(index, 1);
    const idleIndex = idle.indexOf(conn);
    if (idleIndex >= 0) idle.splice(idleIndex, 1);
    if (conn.busy) errors++;
    if (!stopping) {
      open().then(
        (fresh) => {
          connections.push(fresh);
          idle.push(fresh);
          dispatch();
        },
        () => {
          errors++;
        },
      );
    }
  }

  function send(conn: Connection, scheduledAt: number): void {
    const { headers, body } = options.next();
    let head = `POST ${options.path} HTTP/1.1\r\nhost: ${hostHeader}\r\nconnection: keep-alive\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    conn.busy = true;
    conn.scheduledAt = scheduledAt;
    conn.sentAt = now();
    conn.socket.write(head + body);
  }

  function dispatch(): void {
    while (queue.length > 0 && idle.length > 0) {
      send(idle.pop() as Connection, queue.shift() as number);
    }
  }

  for (let i = 0; i < options.connections; i++) {
    const conn = await open();
    connections.push(conn);
    idle.push(conn);
  }

  const interval = 1000 / options.rate;
  const start = now();
  const end = start + options.durationS * 1000;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const t = Math.min(now(), end);
      const due = Math.floor((t - start) / interval);
      while (scheduled < due) queue.push(start + scheduled++ * interval);
      dispatch();
      if (t >= end) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  const unsent = queue.length;
  queue.length = 0;
  // Let the requests in flight finish (bounded), then close every connection.
  const drainDeadline = now() + 10_000;
  while (connections.some((c) => c.busy) && now() < drainDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  stopping = true;
  for (const conn of connections) conn.socket.destroy();

  const n = Math.min(completed, expected);
  return {
    targetRate: options.rate,
    durationS: options.durationS,
    scheduled,
    completed,
    unsent,
    statuses,
    errors,
    achievedRate: Math.round(completed / options.durationS),
    latencyMs: percentiles(latencies.subarray(0, n)),
    serviceTimeMs: percentiles(serviceTimes.subarray(0, n)),
  };
}

/**
 * The first whole response in `buffer` (framed by its Content-Length): its head, status code, body and
 * the bytes after it; null while it has not all arrived.
 */
export function takeResponse(
  buffer: Buffer,
): { head: string; status: string; body: Buffer; rest: Buffer } | null {
  const headerEnd = buffer.indexOf('\r\n\r\n');
  if (headerEnd < 0) return null;
  const head = buffer.subarray(0, headerEnd).toString('latin1');
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
  if (buffer.length < headerEnd + 4 + length) return null;
  return {
    head,
    status: head.slice(9, 12),
    body: buffer.subarray(headerEnd + 4, headerEnd + 4 + length),
    rest: buffer.subarray(headerEnd + 4 + length),
  };
}

export function percentiles(values: Float64Array): Percentiles {
  if (values.length === 0) return { p50: 0, p90: 0, p95: 0, p99: 0, p99_9: 0, max: 0, mean: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) =>
    round2(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0);
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: at(0.5),
    p90: at(0.9),
    p95: at(0.95),
    p99: at(0.99),
    p99_9: at(0.999),
    max: round2(sorted[sorted.length - 1] ?? 0),
    mean: round2(sum / sorted.length),
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
