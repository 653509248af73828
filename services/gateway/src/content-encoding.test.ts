// Compressed bodies on POST /api/ingest: gzip (and x-gzip) are decoded and the record stored as sent,
// BODY_LIMIT applies to the decoded bytes (a gzip bomb gets 413), a corrupt stream gets 400 without its
// bytes in the answer, and every other encoding gets 415 naming the accepted ones.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentCodings } from './content-encoding.ts';
import { converse, recordsIn, type TestGateway, testGateway } from './testing.ts';

const BODY_LIMIT = 2000;
const ID = '0190b2f1-7d3a-7c4e-9b1a-2f3e4d5c6b7a';

/** A pageview envelope whose JSON is exactly `length` bytes long (its title is padded). */
function pageviewOfLength(length: number): string {
  const base = {
    type: 'pageview',
    id: ID,
    data: { session_id: 's1', visitor_fingerprint: 'fp1', title: '' },
  };
  const padding = length - JSON.stringify(base).length;
  if (padding < 0) throw new Error(`a pageview cannot be ${length} bytes`);
  base.data.title = 't'.repeat(padding);
  return JSON.stringify(base);
}

describe('Content-Encoding on POST /api/ingest', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await testGateway({ BODY_LIMIT: String(BODY_LIMIT) });
  });
  afterEach(async () => {
    await gw.close();
  });

  const post = (payload: Buffer | string, encoding?: string) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: {
        'content-type': 'application/json',
        'x-api-token': gw.publicToken,
        ...(encoding === undefined ? {} : { 'content-encoding': encoding }),
      },
      payload,
    });

  it('decodes a gzip body and stores the record as sent', async () => {
    const data = {
      session_id: 's1',
      visitor_fingerprint: 'fp1',
      url: 'https://example.com/ü',
      title: 'Ünïcode',
    };
    const res = await post(gzipSync(JSON.stringify({ type: 'pageview', id: ID, data })), 'gzip');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ success: true });
    const [record] = await recordsIn(gw.log, 1);
    expect(record).toMatchObject({ id: ID, type: 'pageview', data });
  });

  it.each([
    'x-gzip',
    'GZIP',
    'gzip, identity',
    'identity, gzip',
  ])('accepts Content-Encoding: %s', async (value) => {
    const res = await post(gzipSync(pageviewOfLength(200)), value);
    expect(res.statusCode).toBe(202);
  });

  it.each(['identity', ''])('takes Content-Encoding: %j as no encoding', async (value) => {
    expect((await post(pageviewOfLength(200), value)).statusCode).toBe(202);
  });

  it('applies BODY_LIMIT to the decoded body: just under and at it pass, one byte over is 413', async () => {
    for (const length of [BODY_LIMIT - 1, BODY_LIMIT]) {
      const res = await post(gzipSync(pageviewOfLength(length)), 'gzip');
      expect(res.statusCode, `${length} bytes`).toBe(202);
    }
    const compressed = gzipSync(pageviewOfLength(BODY_LIMIT + 1));
    expect(compressed.length).toBeLessThan(BODY_LIMIT); // only the decoded size is over
    const res = await post(compressed, 'gzip');
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ message: `body is larger than the limit of ${BODY_LIMIT} bytes` });
  });

  it('answers a gzip bomb with 413 at the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024, '{'));
    expect(bomb.length).toBeLessThan(BODY_LIMIT * 10);
    const res = await post(bomb, 'gzip');
    expect(res.statusCode).toBe(413);
  });

  it('answers a corrupt or truncated gzip body with 400, without echoing its bytes', async () => {
    const corrupt = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('zq7marker garbage')]);
    const truncated = gzipSync(pageviewOfLength(300)).subarray(0, 40);
    for (const payload of [corrupt, truncated, Buffer.from(pageviewOfLength(300))]) {
      const res = await post(payload, 'gzip');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ message: 'body is not valid gzip' });
    }
  });

  it.each([
    ['deflate', deflateSync(pageviewOfLength(200))],
    ['br', brotliCompressSync(pageviewOfLength(200))],
    ['zstd', Buffer.from(pageviewOfLength(200))],
    ['compress', Buffer.from(pageviewOfLength(200))],
    ['zq7marker', Buffer.from(pageviewOfLength(200))],
    ['gzip, gzip', gzipSync(gzipSync(pageviewOfLength(200)))],
    ['gzip, br', Buffer.from(pageviewOfLength(200))],
  ])('answers Content-Encoding: %s with 415 naming the accepted ones', async (value, payload) => {
    const res = await post(payload, value);
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({
      message: 'Content-Encoding must be gzip (or x-gzip), or none (identity); no other encoding is accepted',
    });
    expect(res.headers['accept-encoding']).toBe('gzip');
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('a gzip bomb over a real connection', () => {
  it('gets 413 at the limit, and the connection stays in step for the request pipelined behind it', async () => {
    const gw = await testGateway();
    try {
      await gw.app.listen({ port: 0, host: '127.0.0.1' });
      const address = gw.app.server.address();
      if (!address || typeof address === 'string') throw new Error('no address');
      // 60 MB of zeros, 61 KB compressed: under the 64 KB limit until decoded.
      const bomb = gzipSync(Buffer.alloc(60 * 1024 * 1024));
      const head = (length: number, encoding: string) =>
        `POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `X-API-Token: ${gw.publicToken}\r\n${encoding}Content-Length: ${length}\r\n\r\n`;
      const next = pageviewOfLength(200);
      const { responses } = await converse(
        address.port,
        Buffer.concat([
          Buffer.from(head(bomb.length, 'Content-Encoding: gzip\r\n')),
          bomb,
          Buffer.from(head(next.length, '') + next),
        ]),
        { expected: 2 },
      );
      expect(responses.map((r) => r.status)).toEqual([413, 202]);
      expect(JSON.parse(responses[0]?.body ?? '')).toEqual({
        message: 'body is larger than the limit of 65536 bytes',
      });
      expect((await recordsIn(gw.log, 1)).map((r) => r.id)).toEqual([ID]);
    } finally {
      await gw.close();
    }
  });
});

describe('contentCodings', () => {
  it('lists the codings of a Content-Encoding header, in lower case, without identity', () => {
    expect(contentCodings(undefined)).toEqual([]);
    expect(contentCodings('')).toEqual([]);
    expect(contentCodings(' Identity ')).toEqual([]);
    expect(contentCodings('GZip')).toEqual(['gzip']);
    expect(contentCodings('deflate, identity,gzip')).toEqual(['deflate', 'gzip']);
    expect(contentCodings(' , ,')).toEqual([]);
  });
});
