// Hostile requests over raw TCP against a real gateway process on 127.0.0.1: bodies far over the limit
// (declared or chunked), gzip bombs, lying Content-Lengths, request smuggling, deeply nested JSON,
// prototype-poisoning keys, bytes that are not UTF-8, oversized headers. Each gets a 4xx (or, for data
// that decodes, 202), the
// process stays up and serves a normal request after each, nothing leaks into Object.prototype, and its
// memory stays bounded. Every request is bounded in bytes and in time.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { parseResponses, type WireResponse } from '@tally/gateway/testing';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, postIngest, startGatewayProcess, tempDataDir } from './support/processes.ts';

const MB = 1024 * 1024;
/** A resource bound on the gateway's resident memory (it idles near 150 MB), not a performance figure. */
const RSS_BOUND_MB = 300;
/** Longest any single exchange may take before the test gives up on it (a hang). */
const EXCHANGE_LIMIT_MS = 20_000;

/** Resident memory of a process in MB, from /proc. */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line[1]) / 1024;
}

/**
 * Opens a connection, lets `send` write to it, and resolves with the first response. `send` gets a signal
 * that is aborted once the response has begun (or the connection closed), so it can stop writing.
 */
function exchange(port: number, send: (socket: Socket, answered: AbortSignal) => Promise<void>) {
  return new Promise<{ response: WireResponse }>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const answered = new AbortController();
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response within ${EXCHANGE_LIMIT_MS} ms`));
    }, EXCHANGE_LIMIT_MS);
    const finish = (complete: boolean) => {
      const response = parseResponses(data, complete)[0];
      if (!response) {
        if (complete) {
          clearTimeout(timer);
          reject(new Error(`connection closed without a response (${data.length} bytes)`));
        }
        return;
      }
      clearTimeout(timer);
      socket.destroy();
      resolve({ response });
    };
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      answered.abort();
      finish(false);
    });
    socket.on('close', () => {
      answered.abort();
      finish(true);
    });
    socket.on('error', () => {}); // a reset after the server answered and closed: 'close' follows
    socket.once('connect', () => {
      send(socket, answered.signal).catch(() => socket.end());
    });
  });
}

/** Writes `data` and waits until it is flushed, or until the server answered (it may stop reading). */
function write(socket: Socket, data: Buffer | string, answered: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (answered.aborted || socket.destroyed) return resolve();
    answered.addEventListener('abort', () => resolve(), { once: true });
    socket.write(data, () => resolve());
  });
}

const head = (headers: Record<string, string | number>) =>
  `POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

describe('hostile requests against a gateway process', () => {
  let gateway: GatewayProcess;
  let token: string;
  let port: number;
  const dataDir = tempDataDir();
  let rssBefore = 0;

  beforeAll(async () => {
    token = (await new FileTokenStore(dataDir).create('hostile', 'public')).token;
    // A request timeout far beyond the exchange limit, so that a gateway which waited for a body it
    // should refuse could not pass by answering 408 instead.
    gateway = await startGatewayProcess({
      TALLY_DATA_DIR: dataDir,
      RATE_LIMIT_PER_HOUR: '1000000',
      REQUEST_TIMEOUT_MS: '600000',
      // The memory bound is one event loop's (each further loop is a thread with its own heap, ~150 MB
      // more at idle on Node.js 24): several loops are covered by gateway-workers.test.ts and the crash test.
      GATEWAY_WORKERS: '1',
    });
    port = Number(new URL(gateway.url).port);
    expect((await postIngest(gateway.url, pageview(), token)).status).toBe(202);
    rssBefore = rssMb(gateway.process.pid as number);
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  const pageview = (data: Record<string, unknown> = { session_id: 's' }) => ({ type: 'pageview', data });
  const request = (
    body: Buffer | string,
    contentType = 'application/json',
    extra: Record<string, string> = {},
  ) =>
    exchange(port, async (socket, answered) => {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      await write(
        socket,
        head({
          'Content-Type': contentType,
          'Content-Length': bytes.length,
          'X-API-Token': token,
          Connection: 'close',
          ...extra,
        }),
        answered,
      );
      await write(socket, bytes, answered);
    }).then(({ response }) => response);

  /** After every hostile request: still up, and a normal record is still accepted. */
  async function expectServing() {
    expect(gateway.process.exitCode).toBeNull();
    expect((await postIngest(gateway.url, pageview(), token)).status).toBe(202);
  }

  // The gateway closes the connection after a 413 (the rest of the body is never read). Bytes the client
  // sent that the server had not read by then make its close a TCP reset, which can destroy the response
  // before the client reads it; so each client below sends just past what the gateway needs to decide, then
  // stops and waits for the answer, as a client that reads while it sends would see it.

  it('answers 413 from the declared Content-Length, without waiting for the body', async () => {
    const { response } = await exchange(port, async (socket, answered) => {
      await write(socket, head({ 'Content-Type': 'application/json', 'Content-Length': 100 * MB }), answered);
      // 1 KB of the declared 100 MB, then nothing: only a gateway that decides from the header answers.
      await write(socket, Buffer.alloc(1024, 'a'), answered);
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ message: expect.stringMatching(/65536 bytes/) });
    await expectServing();
  });

  it('answers 413 to a chunked body past the limit, without waiting for its end', async () => {
    const { response } = await exchange(port, async (socket, answered) => {
      await write(
        socket,
        head({ 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }),
        answered,
      );
      // One chunk just over the limit, and never the final empty chunk: the gateway must stop at the limit.
      const chunk = Buffer.alloc(65536 + 1024, 'a');
      await write(socket, Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk]), answered);
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toHaveProperty('message');
    await expectServing();
  });

  it('answers gzip bombs with 413 at the limit, its memory not growing by their decoded size', async () => {
    // 60 MB of zeros compress to 61 KB: under the 64 KB limit until decoded.
    const bomb = gzipSync(Buffer.alloc(60 * MB));
    expect(bomb.length).toBeLessThan(65536);
    const pid = gateway.process.pid as number;
    const before = rssMb(pid);
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => request(bomb, 'application/json', { 'Content-Encoding': 'gzip' })),
    );
    const grown = rssMb(pid) - before;
    console.log(`gateway RSS grew by ${grown.toFixed(0)} MB for four 60 MB gzip bombs`);
    for (const response of responses) {
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body)).toEqual({ message: 'body is larger than the limit of 65536 bytes' });
    }
    // Decoded whole, the four bodies alone would take 240 MB; decoded up to the limit, a few hundred KB.
    expect(grown).toBeLessThan(60);
    await expectServing();
  });

  it('refuses lying or conflicting lengths', async () => {
    const body = JSON.stringify(pageview());
    // Declares 10 bytes and sends more: the gateway reads 10, which are not JSON.
    expect((await request(body, 'application/json', { 'Content-Length': '10' })).status).toBe(400);
    // Both Content-Length and chunked (request smuggling): refused by the HTTP parser.
    const smuggled = await exchange(port, async (socket, answered) => {
      await write(
        socket,
        `${head({ 'Content-Type': 'application/json', 'Content-Length': 4, 'Transfer-Encoding': 'chunked' })}0\r\n\r\n`,
        answered,
      );
    });
    expect(smuggled.response.status).toBe(400);
    await expectServing();
  });

  it('answers 400 to JSON nested tens of thousands of levels deep', async () => {
    const event = (inner: string) =>
      `{"type":"event","data":{"session_id":"s","event_name":"e","event_data":{"x":${inner}}}}`;
    for (const inner of [
      `${'['.repeat(30_000)}${']'.repeat(30_000)}`,
      `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
    ]) {
      const response = await request(event(inner));
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toEqual({ message: 'body is nested too deeply (at most 32 levels)' });
    }
    await expectServing();
  });

  it('refuses __proto__ and constructor.prototype keys, escaped ones too, and pollutes nothing', async () => {
    for (const [body, contentType] of [
      ['{"__proto__":{"session_id":"polluted"},"type":"pageview","data":{}}', 'application/json'],
      ['{"type":"pageview","data":{"__proto__":{"session_id":"polluted"}}}', 'application/json'],
      ['{"type":"pageview","data":{"\\u005f_proto__":{"session_id":"polluted"}}}', 'application/json'],
      [
        '{"type":"pageview","data":{"constructor":{"prototype":{"session_id":"polluted"}}}}',
        'application/json',
      ],
      ['{"type":"pageview","data":{"__proto__":{"session_id":"polluted"}}}', 'text/plain;charset=UTF-8'],
    ]) {
      const response = await request(body as string, contentType);
      expect(response.status, body).toBe(400);
      expect(JSON.parse(response.body).message, body).toMatch(/__proto__/);
    }
    // Had any of those reached Object.prototype, a pageview without session_id would now pass validation.
    const unpolluted = await request(JSON.stringify(pageview({})));
    expect(unpolluted.status).toBe(400);
    expect(JSON.parse(unpolluted.body)).toEqual({ message: 'data.session_id is required' });
    // An ordinary "constructor" key is data like any other.
    const benign = await request(
      JSON.stringify({
        type: 'event',
        data: { session_id: 's', event_name: 'e', event_data: { constructor: 'x' } },
      }),
    );
    expect(benign.status).toBe(202);
    await expectServing();
  });

  it('answers bytes that are not UTF-8 with 400, wherever they sit, never echoing them', async () => {
    const json = (bytes: number[]) =>
      Buffer.concat([
        Buffer.from('{"type":"event","data":{"session_id":"s'),
        Buffer.from(bytes),
        Buffer.from('","event_name":"e"}}'),
      ]);
    for (const bytes of [
      [0xff],
      [0xc3],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xfe, 0xff],
    ]) {
      const response = await request(json(bytes));
      // Refused, as an escaped lone surrogate ("\ud800") is, rather than decoded to U+FFFD and stored.
      expect(response.status, response.body).toBe(400);
      expect(JSON.parse(response.body)).toEqual({ message: 'body is not valid UTF-8' });
    }
    const outside = await request(
      Buffer.concat([Buffer.from('{"type":'), Buffer.from([0xff, 0xfe]), Buffer.from('}')]),
    );
    expect(outside.status).toBe(400);
    expect(JSON.parse(outside.body)).toHaveProperty('message');
    // In the token header: an invalid token like any other.
    const badToken = await exchange(port, async (socket, answered) => {
      const body = JSON.stringify(pageview());
      await write(
        socket,
        Buffer.concat([
          Buffer.from(
            `POST /api/ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Token: pub_`,
          ),
          Buffer.from([0xff, 0xc3, 0x28]),
          Buffer.from(`\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`),
        ]),
        answered,
      );
    });
    expect(badToken.response.status).toBe(401);
    await expectServing();
  });

  it('answers 431 to oversized headers', async () => {
    const response = await request(JSON.stringify(pageview()), 'application/json', {
      // Over Node's 16 KB header limit, small enough to be read whole before the gateway answers and closes.
      'X-Padding': 'a'.repeat(20 * 1024),
    });
    expect(response.status).toBe(431);
    await expectServing();
  });

  it('keeps its memory bounded after all of it', () => {
    const rssAfter = rssMb(gateway.process.pid as number);
    console.log(`gateway RSS: ${rssBefore.toFixed(0)} MB before, ${rssAfter.toFixed(0)} MB after`);
    expect(rssAfter).toBeLessThan(RSS_BOUND_MB);
  });
});
