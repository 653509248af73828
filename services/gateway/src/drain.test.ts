// Draining on close (SIGTERM): a request already in flight is finished with its 202 and its connection is
// closed after it (the server does not wait for the client's keep-alive); a request that arrives meanwhile
// on a connection the client kept open gets 503 with Retry-After and our error body, and that connection
// is closed too. Real sockets.
import { connect, type Socket } from 'node:net';
import { expect, it, vi } from 'vitest';
import { heldLog, testGateway } from './testing.ts';

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

/** Everything the server sends on the socket, once the server has ended it. */
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

it('finishes requests in flight, ends their connections, and answers 503 with Retry-After to new ones', async () => {
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
  // Connection 1: a request in flight, waiting for the log, when the gateway starts draining.
  const inFlight = connect(address.port, '127.0.0.1');
  const inFlightResponses = readAll(inFlight);
  inFlight.write(request(gw.publicToken));
  await held.started;
  // Connection 2: a client that has begun a request (not idle, so not closed at once) and finishes it late;
  // the server has read its first bytes before it starts draining (its parser reads them first).
  const lateRead = new Promise<void>((resolve) =>
    gw.app.server.once('connection', (socket: Socket) => socket.once('data', () => resolve())),
  );
  const late = connect(address.port, '127.0.0.1');
  const lateResponses = readAll(late);
  const lateRequest = request(gw.publicToken);
  late.write(lateRequest.slice(0, 20));
  await lateRead;

  const closed = gw.app.close();
  await vi.waitFor(() => expect(gw.app.server.listening).toBe(false));
  late.write(lateRequest.slice(20));
  await vi.waitFor(() => expect(requestsSeen).toBe(2));
  held.release();

  // Both connections are ended by the server although the client never closes them, so close() resolves.
  const [first, second] = await Promise.all([inFlightResponses, lateResponses]);
  await closed;
  await gw.close();

  expect(first).toMatch(/^HTTP\/1\.1 202 /);
  expect(first).toMatch(/\r\nconnection: close\r\n/i);
  expect(second).toMatch(/^HTTP\/1\.1 503 /);
  expect(second).toMatch(/\r\nretry-after: 5\r\n/i);
  expect(second).toMatch(/\r\nconnection: close\r\n/i);
  expect(second.split('\r\n\r\n')[1]).toBe(
    JSON.stringify({ error: 'Service temporarily unavailable, retry later' }),
  );
});
