// invoice.paid → a record by the invoice's billing_reason, dated when the invoice was paid:
//   subscription_create → subscription (mrr_impact = the monthly amount of its subscription lines)
//   subscription_cycle  → renewal (mrr_impact 0)
//   subscription_update → upgrade / downgrade by the sign of the invoice total (the proration), no mrr_impact
//   manual, anything else → purchase
// The date is `status_transitions.paid_at`, else the event's `created` (the event follows the payment
// within seconds): an invoice paid on 31 January stays in January however late its webhook arrives.
import type { RevenueEventType } from '@tally/contract';
import { idOf, ignored, type RecordFields, revenueRecord, type StripeMapper } from './mapping.ts';
import { fromMinorUnits } from './money.ts';
import { invoiceMrr } from './plans.ts';
import type { StripeInvoice } from './types.ts';

export const invoicePaid: StripeMapper = (event, options) => {
  const invoice = event.data.object as StripeInvoice;
  const details = invoice.parent?.subscription_details;
  const subscriptionId = idOf(invoice.subscription) ?? idOf(details?.subscription);
  const money = (minor: number) => fromMinorUnits(minor, invoice.currency);
  const record = (eventType: RevenueEventType, amount: number, extra: Partial<RecordFields> = {}) =>
    revenueRecord(
      event,
      options,
      {
        customer: invoice.customer,
        currency: invoice.currency,
        metadata: { ...invoice.subscription_details?.metadata, ...details?.metadata, ...invoice.metadata },
        at: invoice.status_transitions?.paid_at ?? event.created,
      },
      {
        amount: money(amount),
        transaction_id: invoice.id,
        event_type: eventType,
        customer_subscription_id: subscriptionId ?? null,
        is_recurring: subscriptionId !== undefined,
        metadata: { stripe_event_id: event.id, billing_reason: invoice.billing_reason ?? null },
        ...extra,
      },
    );

  switch (invoice.billing_reason) {
    case 'subscription_create':
      if (invoice.amount_paid <= 0) return ignored(event, 'nothing paid (a trial or a free first invoice)');
      return record('subscription', invoice.amount_paid, { mrr_impact: money(invoiceMrr(invoice)) });
    case 'subscription_cycle':
      if (invoice.amount_paid <= 0) return ignored(event, 'nothing paid');
      return record('renewal', invoice.amount_paid, { mrr_impact: 0 });
    case 'subscription_update':
      // The proration invoice: positive when the customer paid for more, negative when credited for less.
      // Its MRR movement is on customer.subscription.updated, so it is not counted twice here.
      if (invoice.total > 0)
        return record('upgrade', invoice.amount_paid > 0 ? invoice.amount_paid : invoice.total);
      if (invoice.total < 0) return record('downgrade', -invoice.total);
      return ignored(event, 'proration of zero');
    default:
      if (invoice.amount_paid <= 0) return ignored(event, 'nothing paid');
      return record('purchase', invoice.amount_paid, { is_recurring: false });
  }
};
