// The invoice.paid mapper on Stripe-shaped fixtures: which record each billing_reason gives, and that the
// record is dated by the invoice's payment (status_transitions.paid_at), not by the webhook's arrival.
import { describe, expect, it } from 'vitest';
import { recordIdFor } from '../record-id.ts';
import { fixture, mappedBy, stripeSeconds } from './fixture-events.ts';
import { invoicePaid } from './invoice-paid.ts';
import type { StripeInvoice } from './types.ts';

const mapped = (name: string) => mappedBy(invoicePaid, name);

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
      mrr_impact: 49, // a 28-day first period (31 January → 28 February) is still one month
      metadata: { stripe_event_id: 'evt_1QeYk2LkdIwHu7ix3nN0aB1c', billing_reason: 'subscription_create' },
      timestamp: 1_769_902_912_000, // paid_at 2026-01-31T23:41:52Z; the event is a second later
    });
    expect(record.timestamp).toBe(Date.parse('2026-01-31T23:41:52Z'));
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
      timestamp: Date.parse('2025-04-01T09:12:35Z'),
    });
  });

  it('ignores a first invoice of nothing (a trial)', () => {
    expect(invoicePaid(fixture('invoice.paid.subscription_create.trial'), {})).toEqual({
      ok: false,
      ignored: 'invoice.paid evt_1QeTrial0LkdIwHu7ixTr1al: nothing paid (a trial or a free first invoice)',
    });
  });

  it('subscription_cycle → renewal with no MRR change, dated by its payment (1 March, not 28 February)', () => {
    expect(mapped('invoice.paid.subscription_cycle').record).toMatchObject({
      event_type: 'renewal',
      amount: 49,
      mrr_impact: 0,
      is_recurring: true,
      transaction_id: 'in_1QjCyc0LkdIwHu7ixRenInv1',
      timestamp: Date.parse('2026-03-01T00:42:06Z'),
    });
  });

  it('subscription_update with a positive proration → upgrade for the amount paid', () => {
    const { record } = mapped('invoice.paid.subscription_update.upgrade');
    expect(record).toMatchObject({
      event_type: 'upgrade',
      amount: 25.14,
      transaction_id: 'in_1QkUpg0LkdIwHu7ixProrat',
      timestamp: Date.parse('2026-03-16T10:02:46Z'),
    });
    expect(record.mrr_impact).toBeUndefined(); // carried by customer.subscription.updated
  });

  it('subscription_update with a credit → downgrade for the size of the credit', () => {
    const { record } = mapped('invoice.paid.subscription_update.downgrade');
    expect(record).toMatchObject({
      event_type: 'downgrade',
      amount: 12.25,
      timestamp: Date.parse('2026-02-14T23:41:52Z'),
    });
  });

  it('manual → purchase, attributed from the invoice metadata, expanded customer, dated when paid', () => {
    expect(mapped('invoice.paid.manual').record).toMatchObject({
      event_type: 'purchase',
      amount: 299,
      currency: 'GBP',
      customer_id: 'cus_RZlifetime55',
      visitor_fingerprint: 'fp_7c1e',
      session_id: '0b6e1f7a-3c2d-4e5f-8a9b-1c2d3e4f5a6b',
      is_recurring: false,
      customer_subscription_id: null,
      // invoiced on 20 February, paid by transfer on 23 February: the payment is the fact
      timestamp: Date.parse('2026-02-23T09:17:45Z'),
    });
  });

  it('keeps zero-decimal currencies as they are', () => {
    expect(mapped('invoice.paid.jpy').record).toMatchObject({
      amount: 5000,
      currency: 'JPY',
      timestamp: Date.parse('2026-02-24T03:05:38Z'),
    });
  });

  it('without paid_at, is dated by the event’s created', () => {
    const withoutTransitions = fixture('invoice.paid.manual');
    delete (withoutTransitions.data.object as StripeInvoice).status_transitions;
    const result = invoicePaid(withoutTransitions, {});
    expect(result.ok && result.record.timestamp).toBe(stripeSeconds('2026-02-23T09:17:46Z') * 1000);

    const paidAtNull = fixture('invoice.paid.manual');
    (paidAtNull.data.object as StripeInvoice).status_transitions = { paid_at: null };
    expect(invoicePaid(paidAtNull, {})).toEqual(result);
  });

  it('gives integer milliseconds even for a fractional Stripe time', () => {
    const event = fixture('invoice.paid.jpy');
    (event.data.object as StripeInvoice).status_transitions = { paid_at: 1_771_902_338.0005 };
    const result = invoicePaid(event, {});
    expect(result.ok && result.record.timestamp).toBe(1_771_902_338_001);
  });

  it('ignores, with the reason, an event with no time to date it by (not one Stripe sends)', () => {
    const event = fixture('invoice.paid.manual');
    delete (event.data.object as StripeInvoice).status_transitions;
    delete (event as { created?: number }).created;
    expect(invoicePaid(event, {})).toEqual({
      ok: false,
      ignored: 'invoice.paid evt_1QnMan2LkdIwHu7ixManual: no time to date it by',
    });
  });
});
