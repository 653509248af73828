// customer.subscription.updated → upgrade / downgrade when a price or quantity changed, with
// mrr_impact = new − old MRR (the old items from previous_attributes); other updates (cancel at period end,
// metadata, a new period) carry no revenue. Dated by the event's `created`: a subscription has no field for
// the time of its last change, and Stripe creates the event when the change is made (for a scheduled change,
// when the schedule applies it), so it is the time of the change on every redelivery.

import { ignored, revenueRecord, type StripeMapper } from './mapping.ts';
import { fromMinorUnits } from './money.ts';
import { planInterval, planName, subscriptionMrr } from './plans.ts';
import type { StripePlan, StripeSubscription, StripeSubscriptionItem } from './types.ts';

export const subscriptionUpdated: StripeMapper = (event, options) => {
  const subscription = event.data.object as StripeSubscription;
  const previous = (event.data.previous_attributes ?? {}) as {
    items?: { data: StripeSubscriptionItem[] };
    plan?: StripePlan;
    quantity?: number;
  };
  if (!previous.items && !previous.plan && previous.quantity === undefined) {
    return ignored(event, 'no change of price or quantity');
  }
  const current = subscription.items.data;
  // Single-item subscriptions of older API versions report a change as `plan` and `quantity`.
  const before =
    previous.items?.data ??
    current.map((item, index) =>
      index === 0
        ? {
            ...item,
            ...(previous.plan ? { plan: previous.plan, price: null } : {}),
            quantity: previous.quantity ?? item.quantity,
          }
        : item,
    );
  const delta = fromMinorUnits(subscriptionMrr(current) - subscriptionMrr(before), subscription.currency);
  if (delta === 0) return ignored(event, 'the monthly recurring revenue did not change');
  return revenueRecord(
    event,
    options,
    {
      customer: subscription.customer,
      currency: subscription.currency,
      metadata: subscription.metadata,
      at: event.created,
    },
    {
      // Not a payment: the contract needs a positive amount for upgrade and downgrade, so the size of the move.
      amount: Math.abs(delta),
      mrr_impact: delta,
      transaction_id: event.id,
      event_type: delta > 0 ? 'upgrade' : 'downgrade',
      customer_subscription_id: subscription.id,
      is_recurring: true,
      metadata: {
        stripe_event_id: event.id,
        plan: planName(current) ?? null,
        previous_plan: planName(before) ?? null,
        interval: planInterval(current) ?? null,
      },
    },
  );
};
