// Property-based tests of POST /api/ingest on hostile input, through Fastify's inject(): any JSON value as a
// body, any envelope, any `data`, raw bytes that are not UTF-8, any content type, any token. Whatever
// comes in, the answer is 202 {success: true} or a 4xx with a `{message}` or `{error}` body: never a 5xx,
// an exception or a hang; bytes that are not UTF-8 are a 400 that says so. fast-check picks a random seed
// per run and prints it with any counterexample.
import { isUtf8 } from 'node:buffer';
import { PAYLOAD_SCHEMAS, RECORD_TYPES, REVENUE_EVENT_TYPES, type RecordType } from '@tally/contract';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, testGateway } from './testing.ts';

// A few hundred runs per property; a request that takes this long is a hang, not a slow answer.
const RUNS = { numRuns: 300, timeout: 10_000 };

let gw: TestGateway;
beforeAll(async () => {
  gw = await testGateway({ RATE_LIMIT_PER_HOUR: '1000000' });
});
afterAll(async () => {
  await gw.close();
});

const inject = (options: InjectOptions) =>
  gw.app.inject({ method: 'POST', url: '/api/ingest', ...options }) as Promise<LightMyRequestResponse>;

/** The response is 202 {success: true}, or a 4xx whose JSON body is exactly `{message}` or `{error}`. */
function expectWellFormed(res: LightMyRequestResponse, allowed?: number[]) {
  const context = `${res.statusCode} ${res.body}`;
  if (allowed) expect(allowed, context).toContain(res.statusCode);
  if (res.statusCode === 202) {
    expect(res.json(), context).toEqual({ success: true });
    return;
  }
  expect(res.statusCode >= 400 && res.statusCode < 500, context).toBe(true);
  expect(String(res.headers['content-type']), context).toMatch(/^application\/json/);
  const body = res.json() as Record<string, unknown>;
  const keys = Object.keys(body);
  expect(keys.length === 1 && (keys[0] === 'message' || keys[0] === 'error'), context).toBe(true);
  expect(typeof Object.values(body)[0], context).toBe('string');
}

const KNOWN_FIELDS = [
  ...new Set(Object.values(PAYLOAD_SCHEMAS).flatMap((schema) => Object.keys(schema.properties))),
];
// Strings of any UTF-16 code units, lone surrogates included (JSON.stringify escapes them, JSON.parse
// gives them back), and JSON values whose strings are like that too.
const anyString = fc.string({ unit: 'binary', maxLength: 24 });
const jsonValue = fc.jsonValue({ maxDepth: 5, stringUnit: 'binary' });
const fieldValue = fc.oneof(
  jsonValue,
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -1, 946_684_800_000, 1e300, null, true, '', 'USD', 'usd', 'QHQ'),
  fc.constantFrom(...REVENUE_EVENT_TYPES),
);
const key = fc.oneof(fc.constantFrom(...KNOWN_FIELDS, '__proto__', 'constructor', 'prototype'), anyString);
const data = fc.oneof(jsonValue, fc.dictionary(key, fieldValue, { maxKeys: 14 }));

const VALID: Record<RecordType, Record<string, unknown>> = {
  pageview: { session_id: 's', url: 'https://example.com/', timestamp: 1_767_225_600_000 },
  event: { session_id: 's', event_name: 'signup', event_data: { plan: 'pro' } },
  identify: { customer_id: 'c', session_id: 's' },
  revenue: {
    visitor_fingerprint: 'v',
    session_id: 's',
    customer_id: 'c',
    amount: 49,
    transaction_id: 't',
    event_type: 'subscription',
  },
};
/** Valid records with a few fields replaced by values of any kind: accepted and refused ones both common. */
const nearlyValid = fc
  .tuple(
    fc.constantFrom<RecordType>(...RECORD_TYPES),
    fc.dictionary(key, fieldValue, { maxKeys: 3 }),
    fc.subarray(KNOWN_FIELDS, { maxLength: 2 }),
  )
  .map(([type, changes, removed]) => {
    const payload: Record<string, unknown> = { ...VALID[type], ...changes };
    for (const field of removed) delete payload[field];
    return { type, data: payload };
  });
/** Envelopes with fields of random types, random extra fields, and any `data`. */
const envelope = fc
  .tuple(
    fc.record(
      {
        type: fc.oneof(fc.constantFrom(...RECORD_TYPES), jsonValue),
        token: fc.oneof(anyString, jsonValue),
        id: fc.oneof(fc.uuid(), anyString, jsonValue),
        data,
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(key, jsonValue, { maxKeys: 4 }),
  )
  .map(([fields, extra]) => ({ ...extra, ...fields }));

/** Header values as an HTTP parser lets them through: visible ASCII, spaces and tabs. */
const headerString = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.constant('\t'),
    ),
    maxLength,
  });

describe('POST /api/ingest on hostile input', () => {
  it('answers any JSON value as the body with 202 or a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(jsonValue, async (body) => {
        const res = await inject({
          headers: { 'content-type': 'application/json', 'x-api-token': gw.secretToken },
          payload: JSON.stringify(body),
        });
        expectWellFormed(res, [202, 400]);
      }),
      RUNS,
    );
  });

  it('answers any envelope, and any value in data, with 202 or 400', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(envelope, nearlyValid), async (body) => {
        // The header's secret token wins over whatever `token` the body carries, so only validation decides.
        const res = await inject({
          headers: { 'content-type': 'application/json', 'x-api-token': gw.secretToken },
          payload: JSON.stringify(body),
        });
        expectWellFormed(res, [202, 400]);
      }),
      RUNS,
    );
  });

  it('answers any bytes as the body, invalid UTF-8 included, with 202 or a 4xx', async () => {
    const valid = Buffer.from(JSON.stringify({ type: 'event', data: { session_id: 's', event_name: 'e' } }));
    const invalidUtf8 = fc.constantFrom(
      [0xff],
      [0xc3], // a lead byte without its continuation
      [0x80], // a continuation byte alone
      [0xc0, 0xaf], // overlong "/"
      [0xed, 0xa0, 0x80], // an encoded surrogate
      [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
      [0x00],
    );
    // Invalid sequences spliced into a valid body (inside strings, between tokens), or random bytes.
    const spliced = fc
      .tuple(fc.nat({ max: valid.length }), fc.array(invalidUtf8, { minLength: 1, maxLength: 3 }))
      .map(([at, chunks]) =>
        Buffer.concat([valid.subarray(0, at), Buffer.from(chunks.flat()), valid.subarray(at)]),
      );
    const bytes = fc.oneof(
      spliced,
      fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
    );
    await fc.assert(
      fc.asyncProperty(
        bytes,
        fc.constantFrom('application/json', 'text/plain;charset=UTF-8'),
        async (payload, type) => {
          const res = await inject({
            headers: { 'content-type': type, 'x-api-token': gw.secretToken },
            payload,
          });
          expectWellFormed(res);
          // Bytes that are not UTF-8 are refused as such, never decoded to U+FFFD and stored.
          if (payload.length > 0 && !isUtf8(payload)) {
            expect(res.statusCode).toBe(400);
            expect(res.json()).toEqual({ message: 'body is not valid UTF-8' });
          }
        },
      ),
      RUNS,
    );
  });

  it('answers any Content-Type with 202 or a 4xx', async () => {
    const mediaType = fc.oneof(
      headerString(60),
      fc
        .tuple(
          fc.constantFrom(
            'application/json',
            'text/plain',
            'APPLICATION/JSON',
            'text/html',
            'application/',
            '',
          ),
          headerString(30),
        )
        .map(([type, rest]) => `${type}${rest}`),
      fc
        .tuple(fc.constantFrom('application/json', 'text/plain'), headerString(20))
        .map(([type, charset]) => `${type}; charset=${charset}`),
    );
    const body = JSON.stringify({ type: 'pageview', data: { session_id: 's' } });
    await fc.assert(
      fc.asyncProperty(mediaType, async (contentType) => {
        const res = await inject({
          headers: { 'content-type': contentType, 'x-api-token': gw.publicToken },
          payload: body,
        });
        expectWellFormed(res);
      }),
      RUNS,
    );
  });

  it('answers any token string in the header with 401, without telling tokens apart', async () => {
    const body = JSON.stringify({ type: 'pageview', data: { session_id: 's' } });
    const base62 = fc.string({
      unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'),
      minLength: 30,
      maxLength: 34,
    });
    const token = fc.oneof(
      headerString(80),
      fc
        .tuple(fc.constantFrom('pub_', 'sec_', 'PUB_', 'key_'), base62)
        .map(([prefix, rest]) => prefix + rest),
    );
    await fc.assert(
      fc.asyncProperty(token, async (value) => {
        const res = await inject({
          headers: { 'content-type': 'application/json', 'x-api-token': value },
          payload: body,
        });
        expectWellFormed(res, [401]);
        // A blank header counts as none (an HTTP parser trims it to empty; inject() passes it as it is).
        if (value.trim()) expect(res.json()).toEqual({ error: 'Invalid API token' });
      }),
      RUNS,
    );
  });

  it('answers any value as the body token (no header) with 401', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyString, jsonValue), async (token) => {
        const payload = JSON.stringify({ type: 'pageview', token, data: { session_id: 's' } });
        const res = await inject({ headers: { 'content-type': 'text/plain' }, payload });
        // A token object with a `__proto__` or `constructor` key makes the body unsafe to parse: 400 first.
        expectWellFormed(res, /"(__proto__|constructor)":/.test(payload) ? [400, 401] : [401]);
      }),
      RUNS,
    );
  });
});
