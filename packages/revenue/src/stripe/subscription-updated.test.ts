// The customer.subscription.updated mapper: a price or quantity change is an upgrade or downgrade whose
// mrr_impact is new − old MRR, dated by the event (the time of the change).
import { describe, expect, it } from 'vitest';
import { fixture, mappedBy } from './fixture-events.ts';
import { subscriptionUpdated } from './subscription-updated.ts';

const mapped = (name: string) => mappedBy(subscriptionUpdated, name);

describe('customer.subscription.updated', () => {
  it('a plan change up → upgrade, mrr_impact from previous_attributes, dated by the event', () => {
    expect(mapped('customer.subscription.updated.upgrade').record).toEqual({
      customer_id: 'user_1042',
      visitor_fingerprint: 'stripe:cus_RXq8fLz2m3N4pQ',
      session_id: 'stripe:cus_RXq8fLz2m3N4pQ',
      currency: 'USD',
      payment_processor: 'stripe',
      amount: 50,
      mrr_impact: 50,
      transaction_id: 'evt_1QkUpg1LkdIwHu7ixSubUpd',
      event_type: 'upgrade',
      customer_subscription_id: 'sub_1QeYk0LkdIwHu7ixZ9x8C7v6',
      is_recurring: true,
      metadata: {
        stripe_event_id: 'evt_1QkUpg1LkdIwHu7ixSubUpd',
        plan: 'Business',
        previous_plan: 'Pro',
        interval: 'monthly',
      },
      timestamp: 1_773_655_364_000, // 2026-03-16T10:02:44Z, the event's created
    });
  });

  it('fewer seats on an annual plan (legacy quantity) → downgrade with a negative monthly impact', () => {
    expect(mapped('customer.subscription.updated.seats_down_annual').record).toMatchObject({
      event_type: 'downgrade',
      amount: 16.33, // one seat of 196 EUR a year: 16.333… a month, rounded to the cent
      mrr_impact: -16.33,
      currency: 'EUR',
      metadata: { plan: 'Team annual', previous_plan: 'Team annual', interval: 'annual' },
      timestamp: Date.parse('2025-09-18T14:23:51Z'),
    });
  });

  it('ignores updates that change no price or quantity', () => {
    const result = subscriptionUpdated(fixture('customer.subscription.updated.cancel_at_period_end'), {});
    expect(result).toMatchObject({
      ok: false,
      ignored: expect.stringContaining('no change of price or quantity'),
    });
  });
});
