// The answers that do not come from the ingest route, over real sockets: those Node's HTTP server would
// write itself (no Host, an unknown Expect, a malformed request, headers too large, a timeout), those of
// Fastify and its plugins (a URL it cannot decode, an OPTIONS that is no preflight), 404 and 405. Each has
// a JSON body, the CORS headers every response carries, and no byte of the request in it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { converse, type TestGateway, testGateway, type WireResponse } from './testing.ts';

/** A string no answer may contain: it only ever appears in the requests. */
const MARKER = 'zq7marker';

function expectJsonAnswer(response: WireResponse | undefined, status: number, key: 'message' | 'error') {
  if (!response) throw new Error('no response');
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.headers['access-control-allow-origin']).toBe('*');
  expect(response.headers['access-control-expose-headers']).toBe('Retry-After');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual([key]);
  expect(typeof body[key]).toBe('string');
  expect(JSON.stringify(response)).not.toContain(MARKER);
}

describe('answers on the public port outside the ingest route', () => {
  let gw: TestGateway;
  let port: number;
  beforeAll(async () => {
    gw = await testGateway({ HEADERS_TIMEOUT_MS: '500' });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const address = gw.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    port = address.port;
  });
  afterAll(async () => {
    await gw.close();
  });

  const one = async (request: string) => (await converse(port, request, { expected: 1 })).responses[0];

  it('OPTIONS that is not a CORS preflight: 400 with a JSON body', async () => {
    const response = await one(`OPTIONS /api/ingest?${MARKER} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expectJsonAnswer(response, 400, 'message');
  });

  it('a CORS preflight: 204 for any origin', async () => {
    const response = await one(
      'OPTIONS /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://shop.example\r\n' +
        'Access-Control-Request-Method: POST\r\n\r\n',
    );
    expect(response?.status).toBe(204);
    expect(response?.headers['access-control-allow-origin']).toBe('*');
  });

  it('an HTTP/1.1 request without Host: 400 with a JSON body, and the connection is closed', async () => {
    const { responses, closedByServer } = await converse(
      port,
      `POST /api/ingest HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"${MARKER}"`,
    );
    expect(responses).toHaveLength(1);
    expectJsonAnswer(responses[0], 400, 'message');
    expect(closedByServer).toBe(true);
  });

  it('an Expect other than 100-continue: 417 with a JSON body', async () => {
    const response = await one(
      `POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 999-${MARKER}\r\nContent-Length: 0\r\n\r\n`,
    );
    expectJsonAnswer(response, 417, 'message');
  });

  it('Expect: 100-continue is still honoured', async () => {
    const { text } = await converse(
      port,
      'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\n\r\n{}',
      { expected: 2 },
    );
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 /);
  });

  it('a malformed request line: 400 with a JSON body, and the connection is closed', async () => {
    const { responses, closedByServer } = await converse(
      port,
      `GET /${MARKER} HTTP/1.1 junk\r\nHost: x\r\n\r\n`,
    );
    expectJsonAnswer(responses[0], 400, 'message');
    expect(responses[0]?.headers.connection).toBe('close');
    expect(closedByServer).toBe(true);
  });

  it('a malformed header: 400 with a JSON body', async () => {
    const { responses } = await converse(port, `GET / HTTP/1.1\r\nHost: x\r\nBad ${MARKER}: y\r\n\r\n`);
    expectJsonAnswer(responses[0], 400, 'message');
  });

  it('headers over 16 KB: 431 with a JSON body, and the connection is closed', async () => {
    const { responses, closedByServer } = await converse(
      port,
      `GET / HTTP/1.1\r\nHost: x\r\nX-Padding: ${MARKER.repeat(2500)}\r\n\r\n`,
    );
    expectJsonAnswer(responses[0], 431, 'error');
    expect(closedByServer).toBe(true);
  });

  it('headers that do not arrive within HEADERS_TIMEOUT_MS: 408 with a JSON body', async () => {
    const { responses, closedByServer } = await converse(
      port,
      `POST /api/ingest HTTP/1.1\r\nX-${MARKER}: 1\r\n`,
    );
    expectJsonAnswer(responses[0], 408, 'error');
    expect(closedByServer).toBe(true);
  });

  it('a URL Fastify cannot decode: 400 with a fixed message', async () => {
    const response = await one(`GET /api/%zz${MARKER} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectJsonAnswer(response, 400, 'message');
  });

  it('an unknown path: 404 with a fixed message', async () => {
    const response = await one(`DELETE /${MARKER}?${MARKER} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectJsonAnswer(response, 404, 'message');
    expect(JSON.parse(response?.body ?? '')).toEqual({
      message: 'not found; the only endpoint is POST /api/ingest',
    });
  });

  it('another method on /api/ingest: 405 with Allow, whatever its body', async () => {
    const body = `{${MARKER}`;
    const response = await one(
      `PUT /api/ingest?${MARKER} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    expectJsonAnswer(response, 405, 'message');
    expect(response?.headers.allow).toBe('POST, OPTIONS');
  });
});
