// Slow bodies against a real gateway process (issue 26, finding 3): connections that send a request's
// headers and then trickle its body (`Content-Length` in the thousands, a byte every half second) used to
// count in flight from their headers on, so that GATEWAY_MAX_IN_FLIGHT of them answered every other client
// 503 for REQUEST_TIMEOUT_MS. Here they hold no admission slot (a request is admitted once its body is
// read): clients on another address get 202 while they are held, and the body-read timeout
// (BODY_TIMEOUT_MS + length at BODY_MIN_BYTES_PER_SECOND, far below REQUEST_TIMEOUT_MS here) cuts them
// off with 408. One address cannot hold more than GATEWAY_MAX_CONNECTIONS_PER_IP connections, across the
// process's event loops: the connections beyond are closed at once, and counted.
// Client addresses are loopback addresses (127.0.0.2, …): Linux routes all of 127.0.0.0/8 to loopback.
// The gateway has parsed a slow request's headers and handed it on once it has sent its 100 Continue (the
// slow clients send `Expect: 100-continue`): Node writes it in the same turn as it hands the request over.
// Counts are bounded, and every client stops by itself at a deadline.

import { reusePortSupported } from '@tally/gateway';
import { type SlowBody, slowBody } from '@tally/gateway/testing';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './support/loopback-clients.ts';
import { eventually, type GatewayProcess, startGatewayProcess, tempDataDir } from './support/processes.ts';

/** Two event loops where Node.js can share the port (the default on a 2-core machine), else one. */
const LOOPS = reusePortSupported() ? 2 : 1;
/** Slow clients give up by themselves after this; the gateway must have cut them off before. */
const SLOW_CLIENT_DEADLINE_MS = 60_000;
const pageview = { type: 'pageview', data: { session_id: 's' } };

/** The value of a counter (summed over its series with these labels) on the gateway's /metrics. */
async function counter(adminUrl: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(labels)) total += Number(line.split(' ').at(-1));
  }
  return total;
}

async function startGateway(
  env: Record<string, string>,
): Promise<{ gateway: GatewayProcess; token: string }> {
  const dataDir = tempDataDir();
  const token = (await new FileTokenStore(dataDir).create('slow-bodies', 'public')).token;
  const gateway = await startGatewayProcess({
    TALLY_DATA_DIR: dataDir,
    GATEWAY_WORKERS: String(LOOPS),
    RATE_LIMIT_PER_HOUR: '100000',
    // Not what cuts the slow bodies off: the client's own deadline comes first.
    REQUEST_TIMEOUT_MS: String(2 * SLOW_CLIENT_DEADLINE_MS),
    CONNECTION_TIMEOUT_MS: String(2 * SLOW_CLIENT_DEADLINE_MS),
    ...env,
  });
  return { gateway, token };
}

describe('slow bodies beside other clients', () => {
  const MAX_IN_FLIGHT = 8;
  /** More slow bodies than every loop's GATEWAY_MAX_IN_FLIGHT together. */
  const SLOW = 20 * LOOPS;
  let gateway: GatewayProcess;
  let token: string;

  beforeAll(async () => {
    ({ gateway, token } = await startGateway({
      GATEWAY_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
      GATEWAY_MAX_CONNECTIONS_PER_IP: String(2 * SLOW),
      // A 6000-byte body is given 12 s + 6000 B at 1000 B/s = 18 s: long enough to hold the slow clients
      // while the others are served, on a loaded machine.
      BODY_TIMEOUT_MS: '12000',
      BODY_MIN_BYTES_PER_SECOND: '1000',
    }));
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('admits other clients while slow bodies are held, then cuts the slow bodies off with 408', async () => {
    const port = Number(new URL(gateway.url).port);
    const slow: SlowBody[] = Array.from({ length: SLOW }, () =>
      slowBody({
        port,
        localAddress: '127.0.0.1',
        token,
        length: 6000,
        everyMs: 500,
        deadlineMs: SLOW_CLIENT_DEADLINE_MS,
      }),
    );
    // Every slow request has been handed over (its 100 Continue came): on the old admission, each held an
    // in-flight slot from here on.
    await Promise.all(slow.map((client) => client.heard));

    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await post(gateway.url, pageview, token, '127.0.0.2'));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(202));
    // The slow ones were held meanwhile, none of them answered (nor shed).
    expect(slow.filter((client) => client.closed)).toEqual([]);
    for (const client of slow) expect(client.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');

    await Promise.all(slow.map((client) => client.done));
    for (const client of slow) {
      expect(client.closedByServer).toBe(true);
      expect(client.received()).toMatch(
        /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 408 [\s\S]*connection: close[\s\S]*"error":/,
      );
    }
    expect(await counter(gateway.adminUrl, 'tally_gateway_shed_total', '')).toBe(0);
    expect(gateway.process.exitCode).toBeNull();
  });
});

describe('connections per client IP', () => {
  const CAP = 6;
  let gateway: GatewayProcess;
  let token: string;

  beforeAll(async () => {
    ({ gateway, token } = await startGateway({
      GATEWAY_MAX_CONNECTIONS_PER_IP: String(CAP),
      // A 2000-byte body: 8 s + 2 s.
      BODY_TIMEOUT_MS: '8000',
      BODY_MIN_BYTES_PER_SECOND: '1000',
    }));
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('closes the connections of one address beyond its cap at once, across event loops, and frees them', async () => {
    const port = Number(new URL(gateway.url).port);
    const open = (localAddress: string) =>
      slowBody({
        port,
        localAddress,
        token,
        length: 2000,
        everyMs: 500,
        deadlineMs: SLOW_CLIENT_DEADLINE_MS,
      });
    const slow = Array.from({ length: 15 }, () => open('127.0.0.3'));
    await Promise.all(slow.map((client) => client.heard));
    const held = slow.filter((client) => !client.closed);
    const refused = slow.filter((client) => client.closed);
    // Exactly the cap is held (their requests handed over); the others were closed before anything was read.
    expect(held.length).toBe(CAP);
    for (const client of held) expect(client.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    for (const client of refused) {
      expect(client.closedByServer).toBe(true);
      expect(client.received()).toBe('');
    }

    // Another address is served meanwhile; one more connection from the first is refused.
    expect((await post(gateway.url, pageview, token, '127.0.0.2')).status).toBe(202);
    const another = open('127.0.0.3');
    await another.done;
    expect(another.closedByServer).toBe(true);
    expect(another.received()).toBe('');
    expect(
      await counter(gateway.adminUrl, 'tally_gateway_connections_refused_total', 'reason="per_ip"'),
    ).toBe(slow.length - CAP + 1);

    // Once the body-read timeout has cut the held ones off, the address has its connections back.
    await Promise.all(held.map((client) => client.done));
    for (const client of held) {
      expect(client.closedByServer).toBe(true);
      expect(client.received()).toMatch(/HTTP\/1\.1 408 /);
    }
    // (The gateway gives a connection back when it has closed it, which may be a moment after the client saw
    // the close.)
    await eventually(10_000, 'a request from the address that was at its cap', async () => {
      const answer = await post(gateway.url, pageview, token, '127.0.0.3').catch(() => null);
      return answer?.status === 202;
    });
  });
});
