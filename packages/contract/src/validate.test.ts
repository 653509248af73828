import { describe, expect, it } from 'vitest';
import { validateIngest, validatePayload } from './validate.ts';

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
    expect(messageOf(revenue({ currency: 'XYZ' }))).toBe(
      'data.currency must be an ISO 4217 currency code (got "XYZ")',
    );
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
