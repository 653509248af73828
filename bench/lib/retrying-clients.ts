// Closed-loop clients that behave as Tally's SDKs do on a refusal: `connections` clients over keep-alive
// HTTP/1.1 connections, each sending its next request as soon as the previous one is acknowledged, and on
// a 503 or 429 waiting the answer's Retry-After (seconds) and sending the same request again (the same
// record id: a copy the server already has is stored once). autocannon and wrk send the next request at
// once whatever the answer, so against a server that holds ingestion back (GATEWAY_MAX_CONSUMER_LAG) they
// spin on refusals as fast as they are answered, which no client does; this generator measures what such
// a server acknowledges, and how long a record waits for it, under clients that retry.
import { connect, type Socket } from 'node:net';
import { type Percentiles, percentiles, takeResponse } from './fixed-rate.ts';

export interface RetryingClientsOptions {
  host: string;
  port: number;
  path: string;
  connections: number;
  durationS: number;
  /** The next new request's headers and body. */
  next(): { headers: Record<string, string>; body: string };
}

export interface RetryingClientsResult {
  durationS: number;
  /** Every answer, by status (retries included). */
  statuses: Record<string, number>;
  /** Requests acknowledged (2xx). */
  accepted: number;
  /** Answers that asked for a retry (503, 429), each followed by a wait of Retry-After and the same request. */
  retried: number;
  /** Connections that failed or closed with a request in flight (the request is sent again). */
  errors: number;
  /** From a request's first send to its acknowledgement, retries and their waits included (ms). */
  acknowledgedAfterMs: Percentiles;
  startedAt: number;
  endedAt: number;
}

interface Client {
  socket: Socket | null;
  buffer: Buffer;
  /** The request in hand (kept until acknowledged) and when it was first sent. */
  request: { headers: Record<string, string>; body: string } | null;
  firstSentAt: number;
}

export async function runRetryingClients(options: RetryingClientsOptions): Promise<RetryingClientsResult> {
  const statuses: Record<string, number> = {};
  const waits: number[] = [];
  let accepted = 0;
  let retried = 0;
  let errors = 0;
  let stopping = false;
  const hostHeader = `${options.host}:${options.port}`;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  function send(client: Client): void {
    if (stopping) return;
    if (!client.socket || client.socket.destroyed) {
      open(client);
      return;
    }
    if (!client.request) {
      client.request = options.next();
      client.firstSentAt = performance.now();
    }
    const { headers, body } = client.request;
    let head = `POST ${options.path} HTTP/1.1\r\nhost: ${hostHeader}\r\nconnection: keep-alive\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    client.socket.write(head + body);
  }

  function open(client: Client): void {
    const socket = connect({ host: options.host, port: options.port, noDelay: true });
    client.socket = socket;
    client.buffer = Buffer.alloc(0);
    socket.once('connect', () => send(client));
    socket.on('data', (data: Buffer) => onData(client, data));
    socket.on('error', () => {});
    socket.on('close', () => {
      if (client.socket !== socket || stopping) return;
      errors++;
      client.socket = null;
      later(100, () => send(client));
    });
  }

  function onData(client: Client, data: Buffer): void {
    client.buffer = client.buffer.length ? Buffer.concat([client.buffer, data]) : data;
    const response = takeResponse(client.buffer);
    if (!response) return;
    const { head, status } = response;
    client.buffer = response.rest;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (/\r\nconnection:\s*close/i.test(head)) {
      client.socket?.destroy();
      client.socket = null;
    }
    if (status === '503' || status === '429') {
      retried++;
      const seconds = Number(/\r\nretry-after:\s*(\d+)/i.exec(head)?.[1] ?? 1);
      later(seconds * 1000, () => send(client));
      return;
    }
    if (status.startsWith('2')) {
      accepted++;
      waits.push(performance.now() - client.firstSentAt);
    }
    client.request = null; // acknowledged, or refused for good (a 4xx): the next one
    send(client);
  }

  const clients: Client[] = Array.from({ length: options.connections }, () => ({
    socket: null,
    buffer: Buffer.alloc(0),
    request: null,
    firstSentAt: 0,
  }));
  const startedAt = Date.now();
  for (const client of clients) open(client);
  await new Promise((resolve) => setTimeout(resolve, options.durationS * 1000));
  stopping = true;
  const endedAt = Date.now();
  for (const timer of timers) clearTimeout(timer);
  for (const client of clients) client.socket?.destroy();
  return {
    durationS: Math.round((endedAt - startedAt) / 100) / 10,
    statuses,
    accepted,
    retried,
    errors,
    acknowledgedAfterMs: percentiles(Float64Array.from(waits)),
    startedAt,
    endedAt,
  };
}
