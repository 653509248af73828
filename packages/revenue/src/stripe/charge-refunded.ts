// charge.refunded → refund of this refund only, negative: `amount_refunded` is cumulative, so this refund is
// its increase since previous_attributes (or the newest refund when the event lists them).
// Dated by the refund's `created` when the event carries the refund (API versions before 2022-11-15 list
// them on the charge), else by the event's `created`, which Stripe sets when the refund is made.

import { idOf, ignored, revenueRecord, type StripeMapper } from './mapping.ts';
import { fromMinorUnits } from './money.ts';
import type { StripeCharge } from './types.ts';

export const chargeRefunded: StripeMapper = (event, options) => {
  const charge = event.data.object as StripeCharge;
  const before = (event.data.previous_attributes as { amount_refunded?: number } | undefined)
    ?.amount_refunded;
  const latest = charge.refunds?.data?.[0];
  const refunded =
    before !== undefined ? charge.amount_refunded - before : (latest?.amount ?? charge.amount_refunded);
  if (refunded <= 0) return ignored(event, 'nothing refunded');
  return revenueRecord(
    event,
    options,
    {
      customer: charge.customer,
      currency: charge.currency,
      metadata: charge.metadata,
      at: latest?.created ?? event.created,
    },
    {
      amount: -fromMinorUnits(refunded, charge.currency),
      // The charge and how much of it is refunded once this refund is made: the same id whether the event
      // lists the refunds (API versions before 2022-11-15) or not, and what `tally import stripe` derives
      // from a refund, so a refund imported and delivered counts once.
      transaction_id: `${charge.id}:refunded:${charge.amount_refunded}`,
      event_type: 'refund',
      is_recurring: false,
      metadata: {
        stripe_event_id: event.id,
        charge: charge.id,
        payment_intent: idOf(charge.payment_intent) ?? null,
        refund: latest?.id ?? null,
      },
    },
  );
};
