// The customer.subscription.deleted mapper: churn of the subscription's whole MRR, dated when the
// subscription ended (ended_at), not when the customer asked to cancel (canceled_at).
import { describe, expect, it } from 'vitest';
import { fixture, mappedBy } from './fixture-events.ts';
import { subscriptionDeleted } from './subscription-deleted.ts';
import type { StripeSubscription } from './types.ts';

describe('customer.subscription.deleted', () => {
  it('→ churn with the lost MRR negative and no amount, dated when the subscription ended', () => {
    const { record } = mappedBy(subscriptionDeleted, 'customer.subscription.deleted');
    expect(record).toMatchObject({
      event_type: 'churn',
      amount: 0,
      mrr_impact: -99,
      customer_id: 'user_1042',
      // the subscription's end, shared with the record `tally import stripe` makes of it
      transaction_id: 'sub_1QeYk0LkdIwHu7ixZ9x8C7v6:ended',
      metadata: { plan: 'Business', interval: 'monthly' },
      // ended_at 2026-04-30T23:41:50Z; the cancellation was asked for on 10 April (canceled_at) and the
      // event is two seconds after the end
      timestamp: 1_777_592_510_000,
    });
    expect(record.timestamp).toBe(Date.parse('2026-04-30T23:41:50Z'));
  });

  it('without ended_at, is dated by the event’s created', () => {
    const event = fixture('customer.subscription.deleted');
    delete (event.data.object as StripeSubscription).ended_at;
    const result = subscriptionDeleted(event, {});
    expect(result.ok && result.record.timestamp).toBe(Date.parse('2026-04-30T23:41:52Z'));
  });

  it('ignores a subscription cancelled during its trial', () => {
    expect(subscriptionDeleted(fixture('customer.subscription.deleted.trial'), {})).toEqual({
      ok: false,
      ignored:
        'customer.subscription.deleted evt_1QtDelTr1LkdIwHu7ixTrial: cancelled during its trial (it never brought revenue)',
    });
  });

  it('ignores a subscription that never started', () => {
    const event = fixture('customer.subscription.deleted');
    (event.data.object as StripeSubscription).status = 'incomplete_expired';
    expect(subscriptionDeleted(event, {})).toMatchObject({
      ok: false,
      ignored: expect.stringContaining('never started'),
    });
  });
});
