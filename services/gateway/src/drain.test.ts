// Draining on close (SIGTERM): a request already in flight is finished with its 202; a request that
// arrives meanwhile on a connection the client kept open gets 503 with Retry-After and our error body,
// and the connection is closed.
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { openEmbeddedLog, type RecordLog } from '@tally/log';
import { expect, it, vi } from 'vitest';
import { testGateway } from './testing.ts';

/** An embedded log whose appends wait until `release()` is called; `started` resolves at the first one. */
function heldLog(dataDir: string) {
  const inner = openEmbeddedLog({ path: join(dataDir, 'log') });
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let markStarted = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const log: RecordLog = {
    consumer: (o) => inner.consumer(o),
    health: () => inner.health(),
    close: () => inner.close(),
    async append(records) {
      markStarted();
      await gate;
      return inner.append(records);
    },
  };
  return { log, release: () => release(), started };
}

function request(token: string): string {
  const body = JSON.stringify({
    type: 'pageview',
    data: { session_id: 's1', visitor_fingerprint: 'fp1', url: 'https://example.com/' },
  });
  return (
    'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n' +
    `Content-Type: application/json\r\nX-API-Token: ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

function readAll(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

it('finishes requests in flight and answers 503 with Retry-After to new ones on open connections', async () => {
  let held: ReturnType<typeof heldLog> | undefined;
  const gw = await testGateway(
    {},
    {
      openLog: (dir) => {
        held = heldLog(dir);
        return held.log;
      },
    },
  );
  if (!held) throw new Error('log not opened');
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const address = gw.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');

  let requestsSeen = 0;
  gw.app.server.on('request', () => {
    requestsSeen++;
  });
  const socket = connect(address.port, '127.0.0.1');
  const responses = readAll(socket);
  socket.write(request(gw.publicToken));
  await held.started; // the first request is in flight, waiting for the log

  const closed = gw.app.close();
  await vi.waitFor(() => expect(gw.app.server.listening).toBe(false));
  socket.write(request(gw.publicToken)); // a second request on the connection the client holds
  await vi.waitFor(() => expect(requestsSeen).toBe(2)); // the server has it, behind the first one
  held.release();

  const text = await responses;
  await closed;
  await gw.close();

  const [first, second] = text.split(/(?=HTTP\/1\.1 )/);
  expect(first).toMatch(/^HTTP\/1\.1 202 /);
  expect(second).toMatch(/^HTTP\/1\.1 503 /);
  expect(second).toMatch(/\r\nretry-after: 5\r\n/i);
  expect(second).toMatch(/\r\nconnection: close\r\n/i);
  expect(second?.split('\r\n\r\n')[1]).toBe(
    JSON.stringify({ error: 'Service temporarily unavailable, retry later' }),
  );
});
