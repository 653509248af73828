// What every Stripe event mapper shares: the mapper's signature, and the parts of a record that do not
// depend on the event type (who it is attributed to, the currency, when it happened, its record id).
// A mapper decides what the event means; revenueRecord turns that into a result.
import type { RevenueData } from '@tally/contract';
import { recordIdFor } from '../record-id.ts';
import type { Id, Metadata, StripeEventLike, StripeMappingOptions, StripeRevenue } from './types.ts';

/** Maps one Stripe event of the type it is registered for to a revenue record, or says why it carries none. */
export type StripeMapper = (event: StripeEventLike, options: StripeMappingOptions) => StripeRevenue;

// Metadata keys an application can set on Stripe objects (Checkout Session → subscription/payment intent)
// to attribute revenue to the browser session: the tracker's getSessionId(), and a visitor id if it has one.
export const METADATA_KEYS = {
  customerId: 'tally_customer_id',
  visitorFingerprint: 'tally_visitor_fingerprint',
  sessionId: 'tally_session_id',
} as const;

export const idOf = (value: Id): string | undefined =>
  typeof value === 'string' ? value : (value?.id ?? undefined);

/** A Stripe time (seconds since the epoch) as a record timestamp (an integer of milliseconds). */
export function millisFromStripeTime(seconds: number | null | undefined): number | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0
    ? Math.round(seconds * 1000)
    : undefined;
}

/** The Stripe side of a record: whose it is, in which currency, and when it happened. */
export interface StripeFact {
  customer: Id;
  /** Lower-case, as Stripe sends it. */
  currency: string;
  /** The metadata of the Stripe objects involved, merged; its tally_* keys attribute the record. */
  metadata: Metadata;
  /**
   * When the fact the record describes happened, in Stripe's seconds: the invoice's payment, the refund,
   * the end of the subscription. Never the delivery time, so a redelivery or a replay keeps the date.
   */
  at: number | null | undefined;
}

/** The fields a mapper decides; revenueRecord adds the rest. */
export type RecordFields = Omit<
  RevenueData,
  'customer_id' | 'visitor_fingerprint' | 'session_id' | 'currency' | 'payment_processor' | 'timestamp'
>;

export const ignored = (event: StripeEventLike, reason: string): StripeRevenue => ({
  ok: false,
  ignored: `${event.type} ${event.id}: ${reason}`,
});

/** The record for `fact` with the mapper's `fields`, and its record id derived from the event id. */
export function revenueRecord(
  event: StripeEventLike,
  options: StripeMappingOptions,
  fact: StripeFact,
  fields: RecordFields,
): StripeRevenue {
  const stripeCustomer = idOf(fact.customer);
  if (!stripeCustomer) return ignored(event, 'no customer to attribute it to');
  const timestamp = millisFromStripeTime(fact.at);
  // Only an event that is not Stripe's lacks its `created` time; without a date the record would be booked
  // at its arrival, which is what the dating is there to prevent.
  if (timestamp === undefined) return ignored(event, 'no time to date it by');
  const metadata = fact.metadata ?? {};
  return {
    ok: true,
    record: {
      customer_id:
        options.customerId?.(stripeCustomer, metadata) ??
        metadata[METADATA_KEYS.customerId] ??
        stripeCustomer,
      // The contract needs a visitor and a session. A webhook has neither unless the application put them in
      // the metadata; otherwise a stable per-customer stand-in, and attribution goes through identify.
      visitor_fingerprint: metadata[METADATA_KEYS.visitorFingerprint] || `stripe:${stripeCustomer}`,
      session_id: metadata[METADATA_KEYS.sessionId] || `stripe:${stripeCustomer}`,
      currency: fact.currency.toUpperCase(),
      payment_processor: 'stripe',
      timestamp,
      ...fields,
    },
    // From the event id: Stripe redelivers an event with the same id, so the record keeps its id.
    id: recordIdFor(`stripe:${event.id}`),
  };
}
