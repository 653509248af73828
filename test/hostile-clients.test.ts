// Hostile clients against a real gateway process on 127.0.0.1: slow clients (slowloris: many connections
// sending their headers or their body a byte at a time, or nothing at all) are cut off by the server's
// timeouts (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, CONNECTION_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, set low
// here) while other clients are served; a flood from one address beyond the rate limit gets 429 with
// Retry-After while another address is still served; the process stays up and its memory bounded.
// Other client addresses are other loopback addresses (127.0.0.2, 127.0.0.3): every connection goes to
// 127.0.0.1. Counts are bounded, and every client stops by itself at a deadline.

import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { reusePortSupported } from '@tally/gateway';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './support/loopback-clients.ts';
import { eventually, type GatewayProcess, startGatewayProcess, tempDataDir } from './support/processes.ts';

/** Two event loops where Node.js can share the port (the default on a 2-core machine), else one. */
const LOOPS = reusePortSupported() ? 2 : 1;
/**
 * A resource bound on the gateway's resident memory, not a performance figure: run from its sources (tsx),
 * it idles near 140 MB with one event loop and 290 MB with two (each thread its own V8 heap, modules and
 * validators), and must not grow much past that.
 */
const RSS_BOUND_MB = 200 + 100 * LOOPS;
/** Slow clients give up by themselves after this; the gateway must have cut them off well before. */
const SLOW_CLIENT_DEADLINE_MS = 45_000;
const RATE_LIMIT = 200;
const OTHER_CLIENT = '127.0.0.2';
const FLOODER = '127.0.0.3';

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line[1]) / 1024;
}

interface SlowClient {
  kind: string;
  /** Whether the gateway closed the connection (rather than the client at its deadline). */
  cutOff: boolean;
  /** What the gateway sent before closing, if anything (a 408 status line). */
  received: string;
  closed: Promise<void>;
}

/**
 * Opens a connection that sends `head` at once and then `trickle` one byte every 100 ms, never finishing,
 * until the gateway closes it or the deadline passes.
 */
function slowClient(port: number, kind: string, head: string, trickle: string): Promise<SlowClient> {
  return new Promise((resolveOpen, rejectOpen) => {
    const socket: Socket = connect({ host: '127.0.0.1', port });
    let timer: NodeJS.Timeout | undefined;
    let resolveClosed: () => void = () => {};
    const client: SlowClient = {
      kind,
      cutOff: false,
      received: '',
      closed: new Promise((resolve) => {
        resolveClosed = resolve;
      }),
    };
    const deadline = setTimeout(() => socket.destroy(), SLOW_CLIENT_DEADLINE_MS);
    socket.on('data', (chunk) => {
      client.received += chunk.toString('latin1');
    });
    socket.on('end', () => {
      client.cutOff = true;
    });
    socket.on('error', () => {
      client.cutOff = true; // reset by the gateway
    });
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(deadline);
      resolveClosed();
    });
    socket.once('connect', () => {
      if (head) socket.write(head);
      let at = 0;
      if (trickle) {
        timer = setInterval(() => {
          if (!socket.destroyed) socket.write(trickle[at++ % trickle.length] as string);
        }, 100);
      }
      resolveOpen(client);
    });
    socket.once('error', rejectOpen);
  });
}

const pageview = { type: 'pageview', data: { session_id: 's' } };

describe('hostile clients against a gateway process', () => {
  let gateway: GatewayProcess;
  let token: string;
  let port: number;
  let rssBefore = 0;
  const dataDir = tempDataDir();

  beforeAll(async () => {
    token = (await new FileTokenStore(dataDir).create('hostile', 'public')).token;
    gateway = await startGatewayProcess({
      TALLY_DATA_DIR: dataDir,
      // The flood's connections spread over the loops, which share its rate-limit count.
      GATEWAY_WORKERS: String(LOOPS),
      RATE_LIMIT_PER_HOUR: String(RATE_LIMIT),
      HEADERS_TIMEOUT_MS: '2000',
      REQUEST_TIMEOUT_MS: '4000',
      CONNECTION_TIMEOUT_MS: '3000',
      KEEP_ALIVE_TIMEOUT_MS: '3000',
      // The 210 slow clients all come from 127.0.0.1, and each is to meet a timeout here: one address's cap
      // on connections has a test of its own (hostile-slow-bodies.test.ts).
      GATEWAY_MAX_CONNECTIONS_PER_IP: '1000',
    });
    port = Number(new URL(gateway.url).port);
    expect((await post(gateway.url, pageview, token, OTHER_CLIENT)).status).toBe(202);
    rssBefore = rssMb(gateway.process.pid as number);
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('cuts off slow clients (headers, body, silence, idle keep-alive) while serving others', async () => {
    const body = JSON.stringify(pageview);
    const clients = await Promise.all([
      // Headers a byte at a time, never finished (slowloris).
      ...Array.from({ length: 100 }, () =>
        slowClient(
          port,
          'headers',
          'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n',
          'X-Slow: aaaaaaaa\r\n',
        ),
      ),
      // Complete headers, then the body a byte at a time (10 KB declared: 17 minutes at this pace).
      ...Array.from({ length: 50 }, () =>
        slowClient(
          port,
          'body',
          `POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-API-Token: ${token}\r\nContent-Length: 10000\r\n\r\n`,
          ' ',
        ),
      ),
      // Connects and sends nothing.
      ...Array.from({ length: 50 }, () => slowClient(port, 'silent', '', '')),
      // One whole request, then the connection is left open and idle.
      ...Array.from({ length: 10 }, () =>
        slowClient(
          port,
          'idle keep-alive',
          `POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-API-Token: ${token}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          '',
        ),
      ),
    ]);

    // Meanwhile other clients are served, one after another.
    for (let i = 0; i < 20; i++) {
      const answer = await post(gateway.url, pageview, token, OTHER_CLIENT);
      expect(answer.status, answer.body).toBe(202);
    }

    await Promise.all(clients.map((c) => c.closed));
    const survivors: Record<string, number> = {};
    for (const { kind } of clients.filter((c) => !c.cutOff)) survivors[kind] = (survivors[kind] ?? 0) + 1;
    expect(survivors, 'slow clients the gateway never cut off, by kind').toEqual({});
    // Those cut off in the middle of a request are told why.
    for (const client of clients.filter((c) => c.kind === 'headers' || c.kind === 'body')) {
      expect(client.received).toMatch(/^HTTP\/1\.1 408 [\s\S]*"error":/);
    }
    for (const client of clients.filter((c) => c.kind === 'idle keep-alive')) {
      expect(client.received).toMatch(/^HTTP\/1\.1 202 /);
    }

    expect(gateway.process.exitCode).toBeNull();
    expect((await post(gateway.url, pageview, token, OTHER_CLIENT)).status).toBe(202);
  });

  it('answers a flood from one address with 429 and Retry-After beyond the limit, still serving others', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 20 });
    const FLOOD = 1000; // five times the hourly limit, from 20 connections
    const statuses = new Map<number, number>();
    let retryAfter: string | undefined;
    let next = 0;
    const flooder = async () => {
      while (next < FLOOD) {
        next++;
        const answer = await post(gateway.url, pageview, token, FLOODER, agent);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 429) {
          retryAfter = String(answer.headers['retry-after']);
          expect(JSON.parse(answer.body)).toEqual({ error: 'Rate limited' });
        }
      }
    };
    const flood = Promise.all(Array.from({ length: 20 }, flooder));
    // While the flood runs, another address is served.
    const others: number[] = [];
    for (let i = 0; i < 10; i++) others.push((await post(gateway.url, pageview, token, OTHER_CLIENT)).status);
    await flood;
    agent.destroy();

    expect(others).toEqual(Array(10).fill(202));
    expect(Object.fromEntries(statuses)).toEqual({ 202: RATE_LIMIT, 429: FLOOD - RATE_LIMIT });
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(gateway.process.exitCode).toBeNull();
  });

  it('keeps its memory bounded after all of it', async () => {
    // Every slow connection is gone (the server's own count, through a fresh request still served).
    await eventually(10_000, 'a normal request after the hostile clients', async () => {
      return (await post(gateway.url, pageview, token, OTHER_CLIENT)).status === 202;
    });
    const rssAfter = rssMb(gateway.process.pid as number);
    console.log(`gateway RSS: ${rssBefore.toFixed(0)} MB before, ${rssAfter.toFixed(0)} MB after`);
    expect(rssAfter).toBeLessThan(RSS_BOUND_MB);
    // What the hostile clients left behind (buffers, connections, counters) is small beside the idle heap.
    expect(rssAfter - rssBefore).toBeLessThan(100);
  });
});
