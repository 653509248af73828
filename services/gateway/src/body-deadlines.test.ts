// The body-read timeout: a body must arrive within BODY_TIMEOUT_MS plus its length at
// BODY_MIN_BYTES_PER_SECOND (BODY_LIMIT for a chunked one). Over real sockets, in process: a trickled body
// is answered 408 and its connection closed long before REQUEST_TIMEOUT_MS (an hour here), whether its
// length is declared or it is chunked; a body that comes in pieces faster than the minimum rate is taken.
import { connect } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { bodyTimeoutMs } from './body-deadlines.ts';
import { converse, type SlowBody, slowBody, type TestGateway, testGateway } from './testing.ts';

let gw: TestGateway | undefined;
const slow: SlowBody[] = [];
afterEach(async () => {
  for (const client of slow.splice(0)) client.stop();
  await gw?.close();
  gw = undefined;
});

async function listening(env: Record<string, string>): Promise<number> {
  gw = await testGateway({ REQUEST_TIMEOUT_MS: '3600000', CONNECTION_TIMEOUT_MS: '3600000', ...env });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return (gw.app.server.address() as { port: number }).port;
}

it('gives a body its base time and its length at the minimum rate', () => {
  const limits = { baseMs: 5000, minBytesPerSecond: 4096, bodyLimit: 65_536 };
  expect(bodyTimeoutMs(limits, 1024)).toBe(5250);
  expect(bodyTimeoutMs(limits, 65_536)).toBe(21_000);
  // Chunked: as long as the limit allows; a longer declared length is refused (413) before it matters.
  expect(bodyTimeoutMs(limits, null)).toBe(21_000);
  expect(bodyTimeoutMs(limits, 10_000_000)).toBe(21_000);
});

it('cuts a trickled body off with 408 at its deadline, declared or chunked', async () => {
  // 1 s + 500 B at 1000 B/s; chunked: 1 s + 1024 B (the limit) at 1000 B/s.
  const port = await listening({
    BODY_TIMEOUT_MS: '1000',
    BODY_MIN_BYTES_PER_SECOND: '1000',
    BODY_LIMIT: '1024',
  });
  const declared = slowBody({
    port,
    token: gw?.publicToken ?? '',
    length: 500,
    everyMs: 200,
    deadlineMs: 30_000,
  });
  slow.push(declared);
  const chunked = new Promise<string>((resolve) => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write(
        'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          `X-API-Token: ${gw?.publicToken}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      const timer = setInterval(() => socket.write('1\r\n \r\n'), 200);
      socket.once('close', () => {
        clearInterval(timer);
        resolve(text);
      });
      setTimeout(() => socket.destroy(), 30_000).unref();
    });
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => {});
  });
  await declared.done;
  expect(declared.closedByServer).toBe(true);
  expect(declared.received()).toMatch(
    /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 408 Request Timeout\r\n[\s\S]*connection: close[\s\S]*\{"error":"Request timeout: the request did not arrive in time"\}$/,
  );
  expect(await chunked).toMatch(/^HTTP\/1\.1 408 /);
  // The gateway goes on serving.
  const next = await converse(port, requestOf(gw?.publicToken ?? ''), { expected: 1 });
  expect(next.responses[0]?.status).toBe(202);
});

function requestOf(token: string, body = JSON.stringify({ type: 'pageview', data: { session_id: 's1' } })) {
  return (
    'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    `X-API-Token: ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

it('takes a body that comes in pieces faster than the minimum rate', async () => {
  const port = await listening({ BODY_TIMEOUT_MS: '10000', BODY_MIN_BYTES_PER_SECOND: '1000' });
  const body = JSON.stringify({ type: 'pageview', data: { session_id: 's1', title: 'x'.repeat(300) } });
  const whole = requestOf(gw?.publicToken ?? '', body);
  const cut = whole.length - body.length;
  const answer = await new Promise<string>((resolve, reject) => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port }, async () => {
      socket.write(whole.slice(0, cut));
      for (let at = cut; at < whole.length; at += 100) {
        await new Promise((r) => setTimeout(r, 50));
        socket.write(whole.slice(at, at + 100));
      }
    });
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n{')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
  });
  expect(answer).toMatch(/^HTTP\/1\.1 202 /);
});
