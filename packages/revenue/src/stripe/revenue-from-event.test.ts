// revenueFromStripeEvent: the table sends each event type to its mapper; every fixture gives a record the
// wire contract accepts (dated, with numbers stored exactly) or a reason; and a redelivered event gives the
// same record, dated by the fact and not by the delivery.
import { validatePayload } from '@tally/contract';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordIdFor } from '../record-id.ts';
import { fixture, fixtureNames, inexactFields } from './fixture-events.ts';
import { revenueFromStripeEvent, STRIPE_MAPPERS } from './revenue-from-event.ts';
import type { StripeEventLike } from './types.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('revenueFromStripeEvent', () => {
  const names = fixtureNames();

  it.each(names)('%s: the mapper of its type gives the result', (name) => {
    const event = fixture(name);
    const mapper = STRIPE_MAPPERS[event.type];
    expect(mapper).toBeTypeOf('function');
    expect(revenueFromStripeEvent(event)).toEqual(mapper?.(fixture(name), {}));
  });

  it('has a mapper for each Stripe event type the webhook example subscribes to, and no other', () => {
    expect(Object.keys(STRIPE_MAPPERS).sort()).toEqual([
      'charge.refunded',
      'customer.subscription.deleted',
      'customer.subscription.updated',
      'invoice.paid',
    ]);
  });

  it.each(names)('%s: a dated record that the wire contract accepts, or a reason', (name) => {
    const event = fixture(name);
    const result = revenueFromStripeEvent(event);
    if (!result.ok) {
      expect(result.ignored).toMatch(/^\S+ evt_\S+: /);
      return;
    }
    const check = validatePayload('revenue', structuredClone(result.record));
    expect(check.ok ? 'valid' : check.message).toBe('valid');
    expect(inexactFields(result.record)).toEqual([]);
    // Dated by the fact, which is never after the event that reports it (in these fixtures, seconds before).
    expect(result.record.timestamp).toBeLessThanOrEqual(event.created * 1000);
    expect(result.record.timestamp).toBeGreaterThan(event.created * 1000 - 60_000);
  });

  it('every fixture is a dated event, and every paid invoice has its paid_at', () => {
    for (const name of names) {
      const event = fixture(name);
      expect(event.created, name).toBeGreaterThan(Date.UTC(2024, 0, 1) / 1000);
      expect(event.created, name).toBeLessThan(Date.UTC(2027, 0, 1) / 1000);
      if (event.type === 'invoice.paid') {
        const invoice = event.data.object as { status_transitions?: { paid_at?: number } };
        expect(invoice.status_transitions?.paid_at, name).toBeTypeOf('number');
      }
    }
  });

  it('a redelivery of an invoice paid on 31 January, on 2 February, is the same record dated 31 January', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-31T23:41:54Z')); // the first delivery, two seconds after the payment
    const first = revenueFromStripeEvent(fixture('invoice.paid.subscription_create'));
    vi.setSystemTime(new Date('2026-02-02T09:30:00Z')); // Stripe delivers the same event again
    const again = revenueFromStripeEvent(fixture('invoice.paid.subscription_create'));

    expect(again).toEqual(first);
    if (!again.ok) throw new Error(again.ignored);
    expect(again.record.timestamp).toBe(Date.parse('2026-01-31T23:41:52Z'));
    expect(new Date(again.record.timestamp ?? 0).toISOString().slice(0, 7)).toBe('2026-01');
    expect(again.id).toBe(recordIdFor('stripe:evt_1QeYk2LkdIwHu7ix3nN0aB1c'));
  });

  it('ignores events that carry no revenue', () => {
    const event = { id: 'evt_1', type: 'customer.created', created: 1_767_225_600, data: { object: {} } };
    expect(revenueFromStripeEvent(event)).toEqual({
      ok: false,
      ignored: 'customer.created evt_1: not a revenue event',
    });
  });

  it('takes only the table’s own entries, not names every object inherits', () => {
    const event: StripeEventLike = {
      id: 'evt_2',
      type: 'toString',
      created: 1_767_225_600,
      data: { object: {} },
    };
    expect(revenueFromStripeEvent(event)).toEqual({
      ok: false,
      ignored: 'toString evt_2: not a revenue event',
    });
  });

  it('maps Stripe customers to your ids with the customerId option', () => {
    const result = revenueFromStripeEvent(fixture('invoice.paid.jpy'), { customerId: (id) => `acct:${id}` });
    expect(result.ok && result.record.customer_id).toBe('acct:cus_RJapan00001');
  });
});
