// Maps Stripe webhook events to Tally revenue records: one mapper per Stripe event type, chosen from a
// table. Pure (no network, no Stripe SDK, no clock): the same event gives the same record, with the same
// date and record id, however often and however late it is delivered.
import { chargeRefunded } from './charge-refunded.ts';
import { invoicePaid } from './invoice-paid.ts';
import { ignored, type StripeMapper } from './mapping.ts';
import { subscriptionDeleted } from './subscription-deleted.ts';
import { subscriptionUpdated } from './subscription-updated.ts';
import type { StripeEventLike, StripeMappingOptions, StripeRevenue } from './types.ts';

/** The Stripe event types that carry revenue, and the mapper of each. */
export const STRIPE_MAPPERS: Readonly<Record<string, StripeMapper>> = {
  'invoice.paid': invoicePaid,
  'customer.subscription.updated': subscriptionUpdated,
  'customer.subscription.deleted': subscriptionDeleted,
  'charge.refunded': chargeRefunded,
};

/** Maps one Stripe webhook event to a revenue record, or says why it carries none. */
export function revenueFromStripeEvent(
  event: StripeEventLike,
  options: StripeMappingOptions = {},
): StripeRevenue {
  const mapper = Object.hasOwn(STRIPE_MAPPERS, event.type) ? STRIPE_MAPPERS[event.type] : undefined;
  return mapper ? mapper(event, options) : ignored(event, 'not a revenue event');
}
