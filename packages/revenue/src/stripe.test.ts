// The Stripe mapping on Stripe-shaped webhook events (fixtures/stripe/, written for these tests after
// Stripe's documented event and object shapes, older and 2025 API versions). Every record it produces must
// also pass the wire contract.
import { readdirSync, readFileSync } from 'node:fs';
import { validatePayload } from '@tally/contract';
import { describe, expect, it } from 'vitest';
import { recordIdFor } from './record-id.ts';
import { fromMinorUnits, revenueFromStripeEvent, type StripeEventLike } from './stripe.ts';

const FIXTURES = new URL('./fixtures/stripe/', import.meta.url);
const fixture = (name: string): StripeEventLike =>
  JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8'));

function mapped(name: string) {
  const result = revenueFromStripeEvent(fixture(name));
  if (!result.ok) throw new Error(`expected a record from ${name}, got: ${result.ignored}`);
  return result;
}

describe('invoice.paid', () => {
  it('subscription_create → subscription, with the MRR of its lines (2025 API shape)', () => {
    const { record, id } = mapped('invoice.paid.subscription_create');
    expect(record).toEqual({
      customer_id: 'user_1042', // from the subscription's tally_customer_id metadata
      visitor_fingerprint: 'stripe:cus_RXq8fLz2m3N4pQ',
      session_id: '8d0f6f5e-2b1a-4c3d-9e8f-7a6b5c4d3e2f',
      currency: 'USD',
      payment_processor: 'stripe',
      amount: 49,
      transaction_id: 'in_1QeYk0LkdIwHu7ixQ2w3E4r5',
      event_type: 'subscription',
      customer_subscription_id: 'sub_1QeYk0LkdIwHu7ixZ9x8C7v6',
      is_recurring: true,
      mrr_impact: 49,
      metadata: { stripe_event_id: 'evt_1QeYk2LkdIwHu7ix3nN0aB1c', billing_reason: 'subscription_create' },
    });
    expect(id).toBe(recordIdFor('stripe:evt_1QeYk2LkdIwHu7ix3nN0aB1c'));
  });

  it('subscription_create with an annual price (older API shape): MRR is a twelfth', () => {
    const { record } = mapped('invoice.paid.subscription_create.legacy');
    expect(record).toMatchObject({
      customer_id: 'cus_PmLegacy7Q2w',
      amount: 588,
      currency: 'EUR',
      mrr_impact: 49,
      event_type: 'subscription',
      customer_subscription_id: 'sub_1OxLeg0LkdIwHu7ixSubLg',
    });
  });

  it('ignores a first invoice of nothing (a trial)', () => {
    expect(revenueFromStripeEvent(fixture('invoice.paid.subscription_create.trial'))).toEqual({
      ok: false,
      ignored: 'invoice.paid evt_1QeTrial0LkdIwHu7ixTr1al: nothing paid (a trial or a free first invoice)',
    });
  });

  it('subscription_cycle → renewal with no MRR change', () => {
    expect(mapped('invoice.paid.subscription_cycle').record).toMatchObject({
      event_type: 'renewal',
      amount: 49,
      mrr_impact: 0,
      is_recurring: true,
      transaction_id: 'in_1QjCyc0LkdIwHu7ixRenInv1',
    });
  });

  it('subscription_update with a positive proration → upgrade for the amount paid', () => {
    const { record } = mapped('invoice.paid.subscription_update.upgrade');
    expect(record).toMatchObject({
      event_type: 'upgrade',
      amount: 25.14,
      transaction_id: 'in_1QkUpg0LkdIwHu7ixProrat',
    });
    expect(record.mrr_impact).toBeUndefined(); // carried by customer.subscription.updated
  });

  it('subscription_update with a credit → downgrade for the size of the credit', () => {
    const { record } = mapped('invoice.paid.subscription_update.downgrade');
    expect(record).toMatchObject({ event_type: 'downgrade', amount: 12.25 });
  });

  it('manual → purchase, attributed from the invoice metadata, expanded customer', () => {
    expect(mapped('invoice.paid.manual').record).toMatchObject({
      event_type: 'purchase',
      amount: 299,
      currency: 'GBP',
      customer_id: 'cus_RZlifetime55',
      visitor_fingerprint: 'fp_7c1e',
      session_id: '0b6e1f7a-3c2d-4e5f-8a9b-1c2d3e4f5a6b',
      is_recurring: false,
      customer_subscription_id: null,
    });
  });

  it('keeps zero-decimal currencies as they are', () => {
    expect(mapped('invoice.paid.jpy').record).toMatchObject({ amount: 5000, currency: 'JPY' });
  });
});

describe('customer.subscription.updated', () => {
  it('a plan change up → upgrade, mrr_impact from previous_attributes', () => {
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
    });
  });

  it('fewer seats on an annual plan (legacy quantity) → downgrade with a negative monthly impact', () => {
    expect(mapped('customer.subscription.updated.seats_down_annual').record).toMatchObject({
      event_type: 'downgrade',
      amount: 16.33,
      mrr_impact: -16.33,
      currency: 'EUR',
      metadata: { plan: 'Team annual', previous_plan: 'Team annual', interval: 'annual' },
    });
  });

  it('ignores updates that change no price or quantity', () => {
    const result = revenueFromStripeEvent(fixture('customer.subscription.updated.cancel_at_period_end'));
    expect(result).toMatchObject({
      ok: false,
      ignored: expect.stringContaining('no change of price or quantity'),
    });
  });
});

describe('customer.subscription.deleted', () => {
  it('→ churn with the lost MRR negative and no amount', () => {
    expect(mapped('customer.subscription.deleted').record).toMatchObject({
      event_type: 'churn',
      amount: 0,
      mrr_impact: -99,
      customer_id: 'user_1042',
      transaction_id: 'evt_1QsDel1LkdIwHu7ixChurn1',
      metadata: { plan: 'Business', interval: 'monthly' },
    });
  });

  it('ignores a subscription cancelled during its trial', () => {
    expect(revenueFromStripeEvent(fixture('customer.subscription.deleted.trial'))).toMatchObject({
      ok: false,
    });
  });
});

describe('charge.refunded', () => {
  it('→ refund of this refund only (amount_refunded is cumulative), negative', () => {
    expect(mapped('charge.refunded.partial').record).toMatchObject({
      event_type: 'refund',
      amount: -100,
      currency: 'GBP',
      customer_id: 'cus_RZlifetime55',
      transaction_id: 'ch_3QuRef0LkdIwHu7ix1Charge:refunded:10000',
      is_recurring: false,
      metadata: { charge: 'ch_3QuRef0LkdIwHu7ix1Charge', payment_intent: 'pi_3QuRef0LkdIwHu7ix1PayInt' },
    });
  });

  it('uses the refund id when the refunds are in the event', () => {
    expect(mapped('charge.refunded.with_refunds').record).toMatchObject({
      amount: -199,
      transaction_id: 're_3QvRef2LkdIwHu7ix0Second',
    });
  });
});

describe('every mapping', () => {
  const names = readdirSync(FIXTURES).map((file) => file.replace(/\.json$/, ''));

  it.each(names)('%s: a record that the wire contract accepts, or a reason', (name) => {
    const result = revenueFromStripeEvent(fixture(name));
    if (!result.ok) {
      expect(result.ignored).toMatch(/^\S+ evt_\S+: /);
      return;
    }
    const check = validatePayload('revenue', structuredClone(result.record));
    expect(check.ok ? 'valid' : check.message).toBe('valid');
  });

  it('ignores events that carry no revenue', () => {
    const event = { id: 'evt_1', type: 'customer.created', data: { object: { id: 'cus_1' } } };
    expect(revenueFromStripeEvent(event)).toEqual({
      ok: false,
      ignored: 'customer.created evt_1: not a revenue event',
    });
  });

  it('maps Stripe customers to your ids with the customerId option', () => {
    const result = revenueFromStripeEvent(fixture('invoice.paid.jpy'), { customerId: (id) => `acct:${id}` });
    expect(result.ok && result.record.customer_id).toBe('acct:cus_RJapan00001');
  });
});

describe('fromMinorUnits', () => {
  it('divides by the currency minor unit', () => {
    expect(fromMinorUnits(4999, 'usd')).toBe(49.99);
    expect(fromMinorUnits(-1225, 'eur')).toBe(-12.25);
    expect(fromMinorUnits(500, 'jpy')).toBe(500);
    expect(fromMinorUnits(1230, 'kwd')).toBe(1.23);
    expect(fromMinorUnits(1234, 'KWD')).toBe(1.234);
  });
});
