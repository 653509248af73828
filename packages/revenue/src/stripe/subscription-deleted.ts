// customer.subscription.deleted → churn: mrr_impact = −the subscription's MRR, amount 0 (no money moves when
// a subscription ends). Ignored when the subscription never started or ended during its trial.
// Dated by `ended_at`, the moment the subscription stopped, else the event's `created` (Stripe sends the
// event when it ends). Not `canceled_at`: that is when the customer asked, which for a cancellation at the
// period end is up to a whole billing period earlier, while the customer still pays; the MRR goes when the
// subscription ends, and that is when the spec's churn belongs.

import { ignored, revenueRecord, type StripeMapper } from './mapping.ts';
import { fromMinorUnits } from './money.ts';
import { planInterval, planName, subscriptionMrr } from './plans.ts';
import type { StripeSubscription } from './types.ts';

export const subscriptionDeleted: StripeMapper = (event, options) => {
  const subscription = event.data.object as StripeSubscription;
  if (subscription.status === 'incomplete_expired') return ignored(event, 'the subscription never started');
  const endedAt = subscription.ended_at ?? subscription.canceled_at;
  if (subscription.trial_end && endedAt && endedAt <= subscription.trial_end) {
    return ignored(event, 'cancelled during its trial (it never brought revenue)');
  }
  const items = subscription.items.data;
  return revenueRecord(
    event,
    options,
    {
      customer: subscription.customer,
      currency: subscription.currency,
      metadata: subscription.metadata,
      at: subscription.ended_at ?? event.created,
    },
    {
      amount: 0,
      mrr_impact: fromMinorUnits(-subscriptionMrr(items), subscription.currency),
      // From the subscription, not the event: a subscription ends once, so the end imported from Stripe's
      // objects (`tally import stripe`) and its webhook share it, and the revenue consumer keeps one.
      transaction_id: `${subscription.id}:ended`,
      event_type: 'churn',
      customer_subscription_id: subscription.id,
      is_recurring: true,
      metadata: {
        stripe_event_id: event.id,
        plan: planName(items) ?? null,
        interval: planInterval(items) ?? null,
      },
    },
  );
};
