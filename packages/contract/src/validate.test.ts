import { describe, expect, it } from 'vitest';
import { LIMITS, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from './schemas.ts';
import { validateIngest, validatePayload, validateRecord } from './validate.ts';

const revenue = (data: Record<string, unknown> = {}): { type: string; data: Record<string, unknown> } => ({
  type: 'revenue',
  data: {
    visitor_fingerprint: 'fp',
    session_id: 's1',
    customer_id: 'cus_1',
    amount: 49,
    transaction_id: 'in_1',
    ...data,
  },
});

const messageOf = (body: unknown) => {
  const r = validateIngest(body);
  return r.ok ? null : r.message;
};

describe('validateIngest', () => {
  it('accepts a minimal record of each type', () => {
    expect(messageOf({ type: 'pageview', data: { session_id: 's' } })).toBeNull();
    expect(messageOf({ type: 'event', data: { session_id: 's', event_name: 'signup' } })).toBeNull();
    expect(messageOf({ type: 'identify', data: { customer_id: 'c' } })).toBeNull();
    expect(messageOf(revenue())).toBeNull();
  });

  it('rejects bodies that are not objects and unknown or missing types', () => {
    expect(messageOf([])).toBe('body must be a JSON object');
    expect(messageOf('x')).toBe('body must be a JSON object');
    expect(messageOf({ data: {} })).toBe('type is required (one of pageview, event, identify, revenue)');
    expect(messageOf({ type: 'click', data: {} })).toBe(
      'type must be one of pageview, event, identify, revenue',
    );
    expect(messageOf({ type: 'pageview' })).toBe('data is required');
    expect(messageOf({ type: 'pageview', data: 'x' })).toBe('data must be an object');
  });

  it.each([
    ['pageview', {}, 'data.session_id is required'],
    ['event', { session_id: 's' }, 'data.event_name is required'],
    ['event', { event_name: 'e' }, 'data.session_id is required'],
    ['identify', { session_id: 's' }, 'data.customer_id is required'],
  ])('names the missing required field of %s', (type, data, message) => {
    expect(messageOf({ type, data })).toBe(message);
  });

  it.each([
    'visitor_fingerprint',
    'session_id',
    'customer_id',
    'amount',
    'transaction_id',
  ])('requires revenue field %s', (field) => {
    const body = revenue();
    delete (body.data as Record<string, unknown>)[field];
    expect(messageOf(body)).toBe(`data.${field} is required`);
  });

  it('reports wrong types with the field path', () => {
    expect(messageOf(revenue({ amount: '49' }))).toBe('data.amount must be a number');
    expect(messageOf({ type: 'pageview', data: { session_id: 's', url: 5 } })).toBe(
      'data.url must be a string',
    );
    expect(messageOf({ type: 'event', data: { session_id: 's', event_name: 'e', event_data: [1] } })).toBe(
      'data.event_data must be an object',
    );
    expect(messageOf(revenue({ metadata: 'plan' }))).toBe('data.metadata must be an object');
    expect(messageOf(revenue({ is_recurring: 'yes' }))).toBe('data.is_recurring must be a boolean');
    expect(messageOf({ type: 'pageview', data: { session_id: '' } })).toBe(
      'data.session_id must not be empty',
    );
    expect(messageOf({ type: 'pageview', id: 'not-a-uuid', data: { session_id: 's' } })).toBe(
      'id must be a UUID',
    );
  });

  it('requires a positive amount except for churn and refund', () => {
    expect(messageOf(revenue({ amount: -5 }))).toMatch(/^data\.amount must be positive/);
    expect(messageOf(revenue({ amount: 0, event_type: 'purchase' }))).toMatch(
      /^data\.amount must be positive/,
    );
    expect(messageOf(revenue({ amount: -5, event_type: 'refund' }))).toBeNull();
    expect(messageOf(revenue({ amount: 0, event_type: 'churn', mrr_impact: -30 }))).toBeNull();
  });

  it('checks event_type against the seven kinds', () => {
    expect(messageOf(revenue({ event_type: 'trial' }))).toBe(
      'data.event_type must be one of purchase, subscription, renewal, upgrade, downgrade, churn, refund',
    );
    for (const t of ['purchase', 'subscription', 'renewal', 'upgrade', 'downgrade']) {
      expect(messageOf(revenue({ event_type: t }))).toBeNull();
    }
  });

  it('defaults currency to USD and normalises ISO 4217 codes', () => {
    const body = revenue();
    expect(validateIngest(body).ok).toBe(true);
    expect(body.data.currency).toBe('USD');
    const eur = revenue({ currency: 'eur' });
    expect(validateIngest(eur).ok).toBe(true);
    expect(eur.data.currency).toBe('EUR');
    expect(messageOf(revenue({ currency: 'XYZ' }))).toBe('data.currency must be an ISO 4217 currency code');
    expect(messageOf(revenue({ currency: 'dollars' }))).toBe(
      'data.currency must be an ISO 4217 currency code',
    );
  });

  it('takes timestamps in milliseconds and rejects seconds', () => {
    expect(
      messageOf({ type: 'pageview', data: { session_id: 's', timestamp: 1_767_225_600_000 } }),
    ).toBeNull();
    expect(messageOf({ type: 'pageview', data: { session_id: 's', timestamp: 1_767_225_600 } })).toMatch(
      /^data\.timestamp must be milliseconds since the Unix epoch/,
    );
  });

  it('accepts null for optional fields and fields the spec does not list', () => {
    expect(
      messageOf({
        type: 'pageview',
        token: 'pub_x',
        extra_envelope_field: 1,
        data: {
          session_id: 's',
          visitor_fingerprint: null,
          referrer: null,
          utm_term: 'shoes',
          utm_content: 'a',
        },
      }),
    ).toBeNull();
  });
});

describe('validatePayload', () => {
  it('validates a bare payload with paths relative to it', () => {
    const r = validatePayload('revenue', { session_id: 's' });
    expect(r).toEqual({ ok: false, message: 'visitor_fingerprint is required' });
    expect(validatePayload('revenue', revenue().data).ok).toBe(true);
  });
});

describe('bounds: every accepted value can be stored as sent', () => {
  const pageview = (data: Record<string, unknown>) => ({
    type: 'pageview',
    data: { session_id: 's', ...data },
  });

  it('takes timestamps as whole milliseconds from 2000 to before 2100', () => {
    expect(messageOf(pageview({ timestamp: MAX_TIMESTAMP_MS - 1 }))).toBeNull();
    expect(messageOf(pageview({ timestamp: MIN_TIMESTAMP_MS }))).toBeNull();
    expect(messageOf(pageview({ timestamp: MAX_TIMESTAMP_MS }))).toMatch(
      /^data\.timestamp must be milliseconds since the Unix epoch before the year 2100/,
    );
    expect(messageOf(pageview({ timestamp: 1e21 }))).toMatch(
      /^data\.timestamp must be .* before the year 2100/,
    );
    expect(messageOf(pageview({ timestamp: 1_767_225_600_000.5 }))).toBe(
      'data.timestamp must be a whole number of milliseconds since the Unix epoch',
    );
  });

  it('takes money with at most 6 decimal places and 15 significant digits, and nothing it would round', () => {
    for (const amount of [0.000001, 49.99, 999_999_999_999_999, 999_999_999.999999, 123_456.5]) {
      expect(messageOf(revenue({ amount, mrr_impact: -amount }))).toBeNull();
    }
    const rounded =
      'data.amount must have at most 6 decimal places and 15 significant digits (money is stored exactly)';
    expect(messageOf(revenue({ amount: 0.0000004 }))).toBe(rounded);
    expect(messageOf(revenue({ amount: 0.1 + 0.2 }))).toBe(rounded);
    expect(messageOf(revenue({ amount: 1_234_567_890.123456 }))).toBe(rounded); // 16 significant digits
    expect(messageOf(revenue({ amount: 1e25 }))).toBe(
      'data.amount must be between -999999999999999 and 999999999999999',
    );
    expect(messageOf(revenue({ mrr_impact: 9e19 }))).toBe(
      'data.mrr_impact must be between -999999999999999 and 999999999999999',
    );
    expect(messageOf(revenue({ mrr_impact: 1.0000001 }))).toMatch(/^data\.mrr_impact must have at most 6/);
  });

  it('bounds string lengths and numbers of keys, naming the field', () => {
    expect(messageOf(pageview({ url: `https://x/${'a'.repeat(LIMITS.url)}` }))).toBe(
      `data.url must be at most ${LIMITS.url} characters long`,
    );
    expect(messageOf(pageview({ session_id: 's'.repeat(LIMITS.identifier + 1) }))).toBe(
      `data.session_id must be at most ${LIMITS.identifier} characters long`,
    );
    expect(messageOf(pageview({ session_id: 's'.repeat(LIMITS.identifier) }))).toBeNull();
    const many = Object.fromEntries(Array.from({ length: LIMITS.mapKeys + 1 }, (_, i) => [`k${i}`, i]));
    expect(messageOf({ type: 'event', data: { session_id: 's', event_name: 'e', event_data: many } })).toBe(
      `data.event_data must have at most ${LIMITS.mapKeys} keys`,
    );
    expect(messageOf(revenue({ metadata: { ['k'.repeat(LIMITS.mapKeyLength + 1)]: 'v' } }))).toBe(
      `data.metadata has a key longer than ${LIMITS.mapKeyLength} characters`,
    );
    const wide = Object.fromEntries(Array.from({ length: LIMITS.payloadKeys }, (_, i) => [`x${i}`, i]));
    expect(messageOf(pageview(wide))).toBe(`data must have at most ${LIMITS.payloadKeys} keys`);
  });

  it('refuses text that is not valid Unicode (a lone surrogate), anywhere in the payload', () => {
    expect(messageOf(pageview({ title: 'a\ud800b' }))).toBe(
      'data.title must be valid Unicode text (it has a lone surrogate)',
    );
    expect(messageOf(pageview({ extra: { deep: ['ok', '\udc00'] } }))).toBe(
      'data.extra.deep[1] must be valid Unicode text (it has a lone surrogate)',
    );
    expect(messageOf(pageview({ '\ud800': 1 }))).toBe('data has a key that is not valid Unicode text');
    expect(messageOf(pageview({ title: 'emoji 😀 is a pair' }))).toBeNull();
  });

  it('refuses numbers that are not finite, anywhere in the payload, naming the field', () => {
    // `1e309` parses to Infinity, which JSON cannot carry: it would be stored as null.
    const parsed = JSON.parse(
      '{"type":"event","data":{"session_id":"s","event_name":"e","event_data":{"big":1e309}}}',
    );
    expect(messageOf(parsed)).toBe(
      'data.event_data.big must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)',
    );
    expect(messageOf(revenue({ metadata: { seats: [1, -Infinity] } }))).toBe(
      'data.metadata.seats[1] must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)',
    );
    expect(messageOf(pageview({ extra: Number.NaN }))).toBe(
      'data.extra must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)',
    );
    expect(validatePayload('revenue', { ...revenue().data, metadata: { n: Infinity } })).toEqual({
      ok: false,
      message: 'metadata.n must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)',
    });
    expect(messageOf(pageview({ extra: { small: 1e-320, large: 1.7976931348623157e308 } }))).toBeNull();
  });

  it('takes JSON numbers as IEEE-754 doubles: an integer beyond 2^53 is kept as the double it parses to', () => {
    // RFC 8259, 6: integers in ±(2^53 − 1) are exact; beyond, a JSON reader keeps the nearest double
    // (README: send such ids as strings). Not refused: `1e20` is a double stored exactly.
    const parsed = JSON.parse(
      '{"type":"event","data":{"session_id":"s","event_name":"e","event_data":{"id":9007199254740993,"max":9007199254740991,"e20":1e20}}}',
    );
    const result = validateIngest(parsed);
    expect(result.ok).toBe(true);
    expect(parsed.data.event_data).toEqual({ id: 2 ** 53, max: Number.MAX_SAFE_INTEGER, e20: 1e20 });
  });

  it('takes record ids as UUIDs in their usual form only', () => {
    expect(messageOf({ ...pageview({}), id: '0190B2A4-3C5D-7E6F-8A9B-0C1D2E3F4A5B' })).toBeNull();
    expect(messageOf({ ...pageview({}), id: 'urn:uuid:0190b2a4-3c5d-7e6f-8a9b-0c1d2e3f4a5b' })).toBe(
      'id must be a UUID',
    );
  });
});

describe('validateRecord', () => {
  const record = (overrides: Record<string, unknown> = {}) => ({
    id: '0190b2a4-3c5d-7e6f-8a9b-0c1d2e3f4a5b',
    type: 'pageview',
    project_id: 'p',
    received_at: 1_767_225_600_000,
    timestamp: 1_767_225_600_000,
    client_timestamp: null,
    timestamp_clamped: false,
    user_agent: null,
    visitor_fingerprint_derived: true,
    data: { session_id: 's', visitor_fingerprint: 'v' },
    ...overrides,
  });

  it('accepts a record as the gateway appends it', () => {
    expect(validateRecord(record())).toMatchObject({ ok: true });
  });

  it('accepts a region and a city by name, or null, and refuses anything else there', () => {
    expect(validateRecord(record({ country: 'GB', region: 'England', city: 'London' }))).toMatchObject({
      ok: true,
    });
    expect(validateRecord(record({ region: null, city: null }))).toMatchObject({ ok: true });
    expect(validateRecord(record({ city: '' }))).toEqual({
      ok: false,
      message: 'city must be a name of 1 to 200 characters',
    });
    expect(validateRecord(record({ region: 'x'.repeat(201) }))).toEqual({
      ok: false,
      message: 'region must be a name of 1 to 200 characters',
    });
    expect(validateRecord(record({ region: 7 }))).toMatchObject({ ok: false });
  });

  it('refuses what an older gateway or another producer could have appended', () => {
    expect(validateRecord(record({ client_timestamp: 1e21 }))).toEqual({
      ok: false,
      message: 'client_timestamp must be whole milliseconds from 2000 to before 2100',
    });
    expect(validateRecord(record({ id: 'x' }))).toEqual({ ok: false, message: 'id must be a UUID' });
    // The same rule as the gateway's: a consumer sets such a record aside rather than store null.
    expect(validateRecord(record({ data: { session_id: 's', extra: { n: Infinity } } }))).toEqual({
      ok: false,
      message: 'data.extra.n must be a finite number (a JSON number beyond ±1.8e308 cannot be stored)',
    });
    expect(validateRecord(record({ data: { session_id: 's', title: 'a\ud800' } }))).toMatchObject({
      ok: false,
    });
    expect(
      validateRecord(
        record({
          type: 'revenue',
          data: { ...revenue().data, amount: 1e25 },
        }),
      ),
    ).toEqual({ ok: false, message: 'data.amount must be between -999999999999999 and 999999999999999' });
  });
});
