import { gzipSync } from 'node:zlib';
import type { IngestRecord } from '@tally/contract';
import type { LogMessage, RecordLog } from '@tally/log';
import { decodedOnly } from '@tally/log/conformance';
import { FileTokenStore } from '@tally/tokens';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TestGateway, testGateway } from './testing.ts';

const pageview = (data: Record<string, unknown> = {}) => ({
  type: 'pageview',
  data: { session_id: 's1', visitor_fingerprint: 'fp1', url: 'https://example.com/a', path: '/a', ...data },
});
const revenue = (data: Record<string, unknown> = {}) => ({
  type: 'revenue',
  data: {
    visitor_fingerprint: 'fp1',
    session_id: 's1',
    customer_id: 'cus_1',
    amount: 49,
    transaction_id: 'in_1',
    event_type: 'subscription',
    mrr_impact: 49,
    ...data,
  },
});

async function logged(log: RecordLog, count: number): Promise<IngestRecord[]> {
  const consumer = log.consumer({ group: `test-${Math.random()}` });
  const seen: LogMessage[] = [];
  const deadline = Date.now() + 5000;
  while (seen.length < count && Date.now() < deadline) {
    seen.push(...decodedOnly(await consumer.poll({ waitMs: 100 })));
  }
  await consumer.close();
  return seen.map((m) => m.record);
}

describe('POST /api/ingest', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await testGateway();
  });
  afterEach(async () => {
    await gw.close();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('accepts a token created while it runs from its first request (it checks the store on a miss)', async () => {
    const { token } = await new FileTokenStore(gw.dataDir).create('late-project', 'public');
    const res = await post(pageview(), { 'x-api-token': token });
    expect(res.statusCode).toBe(202);
    const [record] = (await logged(gw.log, 1)).filter((r) => r.project_id === 'late-project');
    expect(record?.type).toBe('pageview');
  });

  it('accepts each record type with 202 { success: true } and appends it durably', async () => {
    const bodies = [
      pageview(),
      { type: 'event', data: { session_id: 's1', event_name: 'signup', event_data: { plan: 'pro' } } },
      { type: 'identify', data: { session_id: 's1', customer_id: 'cus_1' } },
      revenue(),
    ];
    for (const body of bodies) {
      const res = await post(body, { 'x-api-token': gw.secretToken });
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ success: true });
    }
    const records = await logged(gw.log, 4);
    expect(records.map((r) => r.type)).toEqual(
      expect.arrayContaining(['pageview', 'event', 'identify', 'revenue']),
    );
    const rev = records.find((r) => r.type === 'revenue');
    expect(rev).toMatchObject({
      project_id: 'test-project',
      data: { customer_id: 'cus_1', amount: 49, currency: 'USD', transaction_id: 'in_1' },
      user_agent: 'lightMyRequest',
      visitor_fingerprint_derived: false,
      timestamp_clamped: false,
    });
    expect(rev?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(records)).not.toContain(gw.secretToken);
  });

  it('takes the token from the body when the header is absent', async () => {
    const res = await post({ ...pageview(), token: gw.publicToken });
    expect(res.statusCode).toBe(202);
  });

  it('lets the header win when header and body carry different tokens', async () => {
    expect(
      (await post({ ...pageview(), token: 'pub_invalid' }, { 'x-api-token': gw.publicToken })).statusCode,
    ).toBe(202);
    const res = await post({ ...pageview(), token: gw.publicToken }, { 'x-api-token': 'pub_invalid' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Invalid API token' });
  });

  it('answers 401 Missing API token without a token', async () => {
    const res = await post(pageview());
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Missing API token' });
  });

  it.each([
    ['unknown', `pub_${'a'.repeat(32)}`],
    ['malformed', 'hello'],
    ['wrong prefix', `key_${'a'.repeat(32)}`],
  ])('answers 401 Invalid API token for an %s token', async (_kind, token) => {
    const res = await post(pageview(), { 'x-api-token': token });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Invalid API token' });
  });

  it('answers 401 Invalid API token for a read key (the dashboard API key), as for any unknown token', async () => {
    const { token } = await new FileTokenStore(gw.dataDir).create('test-project', 'read');
    expect(token).toMatch(/^read_/);
    for (const headers of [{ 'x-api-token': token }, {}] as Record<string, string>[]) {
      const res = await post({ ...pageview(), token }, headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Invalid API token' });
    }
  });

  it('adds the country of the client IP to the record, and never the IP', async () => {
    await gw.close();
    gw = await testGateway({ TRUST_PROXY: '127.0.0.1' });
    const from = (ip: string, body: unknown) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/ingest',
        remoteAddress: '127.0.0.1',
        headers: { 'content-type': 'application/json', 'x-api-token': gw.secretToken, 'x-forwarded-for': ip },
        payload: JSON.stringify(body),
      });
    expect((await from('81.2.69.142', pageview({ screen_width: 1280 }))).statusCode).toBe(202);
    expect((await from('10.0.0.1', pageview())).statusCode).toBe(202);
    expect((await from('81.2.69.142', revenue())).statusCode).toBe(202);
    const records = await logged(gw.log, 3);
    expect(records.map((r) => [r.type, r.country])).toEqual([
      ['pageview', 'GB'],
      ['pageview', null],
      ['revenue', null],
    ]);
    expect((records[0]?.data as { screen_width?: number }).screen_width).toBe(1280);
    expect(JSON.stringify(records)).not.toContain('81.2.69.142');
  });

  it('answers 401 Invalid API token for a non-string body token', async () => {
    const res = await post({ ...pageview(), token: 12 });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Invalid API token' });
  });

  it('answers 403 for revenue with a public token, before validating the payload', async () => {
    const res = await post({ type: 'revenue', data: {} }, { 'x-api-token': gw.publicToken });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'Revenue events require secret token' });
  });

  it('accepts pageview, event and identify with a public token', async () => {
    for (const body of [
      pageview(),
      { type: 'event', data: { session_id: 's', event_name: 'e' } },
      { type: 'identify', data: { customer_id: 'c' } },
    ]) {
      expect((await post(body, { 'x-api-token': gw.publicToken })).statusCode).toBe(202);
    }
  });

  it.each([
    [{ type: 'pageview', data: {} }, 'data.session_id is required'],
    [{ type: 'event', data: { session_id: 's' } }, 'data.event_name is required'],
    [{ type: 'identify', data: { session_id: 's' } }, 'data.customer_id is required'],
    [revenue({ customer_id: undefined }), 'data.customer_id is required'],
    [revenue({ transaction_id: undefined }), 'data.transaction_id is required'],
    [revenue({ amount: 'ten' }), 'data.amount must be a number'],
    [{ type: 'purchase', data: {} }, 'type must be one of pageview, event, identify, revenue'],
    [{ data: {} }, 'type is required (one of pageview, event, identify, revenue)'],
  ])('answers 400 with the field path: %j', async (body, message) => {
    const res = await post(body, { 'x-api-token': gw.secretToken });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message });
  });

  it('accepts fields the spec does not list and keeps them', async () => {
    const res = await post(pageview({ utm_term: 'shoes', utm_content: 'banner' }), {
      'x-api-token': gw.publicToken,
    });
    expect(res.statusCode).toBe(202);
    const [record] = await logged(gw.log, 1);
    expect(record?.data).toMatchObject({ utm_term: 'shoes', utm_content: 'banner' });
  });

  it('derives a cookieless visitor id when the fingerprint is null or missing, never storing the IP', async () => {
    const headers = { 'x-api-token': gw.publicToken, 'user-agent': 'Mozilla/5.0 Test' };
    expect((await post(pageview({ visitor_fingerprint: null }), headers)).statusCode).toBe(202);
    expect((await post(pageview({ visitor_fingerprint: undefined }), headers)).statusCode).toBe(202);
    const other = { ...headers, 'user-agent': 'Other/1.0' };
    expect((await post(pageview({ visitor_fingerprint: null }), other)).statusCode).toBe(202);
    const [a, b, c] = await logged(gw.log, 3);
    expect(a?.visitor_fingerprint_derived).toBe(true);
    expect(a?.data.visitor_fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(b?.data.visitor_fingerprint).toBe(a?.data.visitor_fingerprint);
    expect(c?.data.visitor_fingerprint).not.toBe(a?.data.visitor_fingerprint);
    expect(JSON.stringify([a, b, c])).not.toContain('127.0.0.1');
  });

  it('keeps a client timestamp, and clamps and flags one far in the future', async () => {
    const past = Date.UTC(2026, 0, 5);
    const future = Date.now() + 48 * 3_600_000;
    await post(pageview({ timestamp: past }), { 'x-api-token': gw.publicToken });
    await post(pageview({ timestamp: future }), { 'x-api-token': gw.publicToken });
    const [a, b] = await logged(gw.log, 2);
    expect(a).toMatchObject({ timestamp: past, client_timestamp: past, timestamp_clamped: false });
    expect(b).toMatchObject({ client_timestamp: future, timestamp_clamped: true });
    expect(b?.timestamp).toBe(b?.received_at);
  });

  it('uses the client-chosen envelope id, so retries carry the same record id', async () => {
    const id = '0190b2f1-7d3a-7c4e-9b1a-2f3e4d5c6b7a';
    expect((await post({ ...pageview(), id }, { 'x-api-token': gw.publicToken })).statusCode).toBe(202);
    const [record] = await logged(gw.log, 1);
    expect(record?.id).toBe(id);
  });

  it('accepts text/plain bodies (navigator.sendBeacon) with or without a charset', async () => {
    for (const contentType of ['text/plain', 'text/plain;charset=UTF-8']) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': contentType },
        payload: JSON.stringify({ ...pageview(), token: gw.publicToken }),
      });
      expect(res.statusCode).toBe(202);
    }
  });

  it('answers 400 for invalid JSON, empty bodies and non-object bodies', async () => {
    for (const [payload, message] of [
      ['{"type": ', 'body is not valid JSON (Unexpected end of JSON input)'],
      ['{bad json', 'body is not valid JSON (error at position 1)'],
      ['{"type":"pageview"} x', 'body is not valid JSON (error at position 20)'],
      ['[1,x]', 'body is not valid JSON'],
      ['[1,2]', 'body must be a JSON object'],
      ['"pageview"', 'body must be a JSON object'],
    ]) {
      const res = await post(payload as string, { 'x-api-token': gw.publicToken });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ message });
    }
    const empty = await gw.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toHaveProperty('message');
  });

  it('refuses bytes that are not UTF-8 with 400, in JSON, text/plain or gzip bodies, never echoing them', async () => {
    const body = (bytes: number[]) =>
      Buffer.concat([
        Buffer.from('{"type":"event","data":{"session_id":"s'),
        Buffer.from(bytes),
        Buffer.from('","event_name":"e"}}'),
      ]);
    const invalid = [[0xff], [0xc3], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]];
    for (const bytes of invalid) {
      for (const [contentType, encoding, payload] of [
        ['application/json', undefined, body(bytes)],
        ['text/plain;charset=UTF-8', undefined, body(bytes)],
        ['application/json', 'gzip', gzipSync(body(bytes))],
      ] as const) {
        const res = await gw.app.inject({
          method: 'POST',
          url: '/api/ingest',
          headers: {
            'content-type': contentType,
            'x-api-token': gw.publicToken,
            ...(encoding && { 'content-encoding': encoding }),
          },
          payload,
        });
        expect(res.statusCode, `${bytes} ${contentType} ${encoding}`).toBe(400);
        expect(res.body).toBe('{"message":"body is not valid UTF-8"}');
      }
    }
    // The same text, well-formed (é), is stored as sent.
    const valid = await post(body([0xc3, 0xa9]).toString('utf8'), { 'x-api-token': gw.publicToken });
    expect(valid.statusCode).toBe(202);
    const [record] = await logged(gw.log, 1);
    expect(record?.data.session_id).toBe('sé');
  });

  it('refuses a number that is not finite with 400 naming its field, and keeps integers beyond 2^53 as doubles', async () => {
    const tooLarge = await post(
      '{"type":"event","data":{"session_id":"s","event_name":"e","event_data":{"count":1e309}}}',
      { 'x-api-token': gw.publicToken },
    );
    expect(tooLarge.statusCode).toBe(400);
    expect(tooLarge.json()).toEqual({
      message:
        'data.event_data.count must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)',
    });
    const metadata = await post(
      `{"type":"revenue","data":{"visitor_fingerprint":"v","session_id":"s","customer_id":"c","amount":1,"transaction_id":"t","metadata":{"n":-1e400}}}`,
      { 'x-api-token': gw.secretToken },
    );
    expect(metadata.json()).toEqual({
      message: 'data.metadata.n must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)',
    });
    // JSON numbers are IEEE-754 doubles (README): 2^53 + 1 is read, and stored, as 2^53.
    const big = await post(
      '{"type":"event","data":{"session_id":"s","event_name":"e","event_data":{"id":9007199254740993}}}',
      { 'x-api-token': gw.publicToken },
    );
    expect(big.statusCode).toBe(202);
    const [record] = await logged(gw.log, 1);
    expect((record?.data as { event_data: unknown }).event_data).toEqual({ id: 9007199254740992 });
  });

  it('answers 415 for other content types', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'type=pageview',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().message).toMatch(/application\/json or text\/plain/);
  });

  it('answers 413 for bodies over the limit', async () => {
    const res = await post(pageview({ title: 'x'.repeat(70_000) }), { 'x-api-token': gw.publicToken });
    expect(res.statusCode).toBe(413);
    expect(res.json().message).toMatch(/65536 bytes/);
  });

  it('rejects hostile JSON safely: __proto__ keys and deep nesting', async () => {
    const proto = await post(
      `{"type":"event","data":{"session_id":"s","event_name":"e","event_data":{"__proto__":{"admin":true}}}}`,
      { 'x-api-token': gw.publicToken },
    );
    expect(proto.statusCode).toBe(400);
    expect(proto.json().message).toMatch(/__proto__/);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();

    const deep = `{"type":"event","data":{"session_id":"s","event_name":"e","event_data":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`;
    const res = await post(deep, { 'x-api-token': gw.publicToken });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message: 'body is nested too deeply (at most 32 levels)' });
  });

  it('answers the CORS preflight for any origin and puts CORS headers on every response', async () => {
    const preflight = await gw.app.inject({
      method: 'OPTIONS',
      url: '/api/ingest',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-api-token',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(preflight.headers['access-control-allow-headers'])).toMatch(/X-API-Token/i);
    expect(preflight.headers['access-control-max-age']).toBe('86400');

    const error = await post(pageview(), { origin: 'https://shop.example' });
    expect(error.statusCode).toBe(401);
    expect(error.headers['access-control-allow-origin']).toBe('*');
    expect(String(error.headers['access-control-expose-headers'])).toMatch(/Retry-After/i);
  });

  it('serves only POST /api/ingest', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: 'not found; the only endpoint is POST /api/ingest' });
    const get = await gw.app.inject({ method: 'GET', url: '/api/ingest' });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST, OPTIONS');
    expect(get.json().message).toMatch(/use POST/);
  });

  it('never echoes bytes of the request in an error answer', async () => {
    const marker = 'zq7marker';
    const answers = await Promise.all([
      post(`{"type":"pageview","data":{"title":"${marker}"} ${marker}`),
      post(`["${marker}", ${marker}]`),
      post(`{"${marker}":"\u0001${marker}`),
      gw.app.inject({
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': `text/${marker}` },
        payload: '{}',
      }),
      gw.app.inject({
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': `${marker}` },
        payload: '{}',
      }),
      gw.app.inject({ method: 'GET', url: `/${marker}?q=${marker}` }),
      gw.app.inject({ method: 'PATCH', url: `/api/ingest?${marker}` }),
      gw.app.inject({ method: 'QUERY', url: `/${marker}`, payload: marker }),
    ]);
    for (const res of answers) {
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.headers['content-type'], res.body).toMatch(/^application\/json/);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(JSON.stringify([res.body, res.headers])).not.toContain(marker);
    }
  });

  it('counts requests by status and type in the metrics', async () => {
    await post(pageview(), { 'x-api-token': gw.publicToken });
    await post(revenue(), { 'x-api-token': gw.publicToken });
    const text = await gw.metrics.registry.metrics();
    expect(text).toContain('tally_ingest_requests_total{status="202",type="pageview"} 1');
    expect(text).toContain('tally_ingest_requests_total{status="403",type="revenue"} 1');
    expect(text).toMatch(/tally_log_append_duration_seconds_count 1/);
  });
});

describe('POST /api/ingest when the record log cannot confirm', () => {
  it('answers 503 with Retry-After, never 202, when the log is too slow', async () => {
    const gw = await testGateway(
      { APPEND_TIMEOUT_MS: '50' },
      {
        openLog: () => ({
          append: () => new Promise(() => {}),
          consumer: () => {
            throw new Error('unused');
          },
          health: async () => ({ ok: true }),
          deadLetters: {} as RecordLog['deadLetters'], // the gateway never reads it
          close: async () => {},
        }),
      },
    );
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/json', 'x-api-token': gw.publicToken },
      payload: JSON.stringify(pageview()),
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toHaveProperty('error');
    await gw.close();
  });

  it('answers 503 when the log fails the append', async () => {
    const gw = await testGateway(
      {},
      {
        openLog: () => ({
          append: async () => {
            throw new Error('disk full');
          },
          consumer: () => {
            throw new Error('unused');
          },
          health: async () => ({ ok: false }),
          deadLetters: {} as RecordLog['deadLetters'], // the gateway never reads it
          close: async () => {},
        }),
      },
    );
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/json', 'x-api-token': gw.publicToken },
      payload: JSON.stringify(pageview()),
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).not.toContain('disk full');
    await gw.close();
  });
});
