// The narrow Stripe shapes the mappers read, and what the mapping takes and returns. Each type names only
// the fields read, so any Stripe event object, from the `stripe` package or parsed JSON, fits. Both the
// older Invoice shape (`invoice.subscription`, `line.price`) and the one of API versions from 2025-03-31 on
// (`invoice.parent.subscription_details`, `line.pricing`) are covered. Stripe times are seconds since the
// epoch; Stripe amounts are integers in the currency's minor unit.
import type { RevenueData } from '@tally/contract';

export type Id = string | { id: string } | null | undefined;
export type Metadata = Record<string, string> | null | undefined;
export type Interval = 'day' | 'week' | 'month' | 'year';

export interface StripeRecurring {
  interval: Interval;
  interval_count?: number | null;
}
export interface StripePrice {
  id: string;
  nickname?: string | null;
  lookup_key?: string | null;
  unit_amount?: number | null;
  unit_amount_decimal?: string | null;
  recurring?: StripeRecurring | null;
}
/** The legacy Plan object, still sent beside `price` on subscription items. */
export interface StripePlan {
  id: string;
  nickname?: string | null;
  amount?: number | null;
  interval: Interval;
  interval_count?: number | null;
}
export interface StripeSubscriptionItem {
  price?: StripePrice | null;
  plan?: StripePlan | null;
  quantity?: number | null;
}
export interface StripeSubscription {
  id: string;
  customer: Id;
  currency: string;
  status?: string;
  items: { data: StripeSubscriptionItem[] };
  metadata?: Metadata;
  trial_end?: number | null;
  /** When the subscription stopped (seconds): the churn's date. */
  ended_at?: number | null;
  /** When the cancellation was asked for (seconds); before `ended_at` for a cancellation at period end. */
  canceled_at?: number | null;
}
export interface StripeInvoiceLine {
  amount: number;
  proration?: boolean;
  quantity?: number | null;
  type?: string;
  price?: StripePrice | null;
  plan?: StripePlan | null;
  period?: { start: number; end: number } | null;
  parent?: { type?: string; subscription_item_details?: { proration?: boolean } | null } | null;
  pricing?: { price_details?: { price?: string } | null } | null;
}
export interface StripeInvoice {
  id: string;
  customer: Id;
  currency: string;
  amount_paid: number;
  total: number;
  billing_reason?: string | null;
  subscription?: Id;
  subscription_details?: { metadata?: Metadata } | null;
  parent?: { subscription_details?: { subscription?: Id; metadata?: Metadata } | null } | null;
  metadata?: Metadata;
  lines?: { data: StripeInvoiceLine[] };
  /** `paid_at` (seconds) is when the invoice was paid: the date of its record. */
  status_transitions?: { paid_at?: number | null } | null;
}
export interface StripeRefund {
  id: string;
  amount: number;
  /** When the refund was made (seconds): the date of its record. */
  created: number;
}
export interface StripeCharge {
  id: string;
  customer: Id;
  currency: string;
  amount: number;
  amount_refunded: number;
  payment_intent?: Id;
  metadata?: Metadata;
  /** Newest first; present in events of API versions before 2022-11-15 only. */
  refunds?: { data: StripeRefund[] } | null;
}
/** A Stripe webhook event; `data.object` is narrowed by `type`. */
export interface StripeEventLike {
  id: string;
  type: string;
  /** When Stripe created the event (seconds). It stays the same on every redelivery. */
  created: number;
  data: { object: unknown; previous_attributes?: unknown };
}

export interface StripeMappingOptions {
  /**
   * Your customer id for a Stripe customer. Default: the object's `tally_customer_id` metadata when set,
   * else the Stripe customer id (`cus_…`).
   */
  customerId?: (stripeCustomerId: string, metadata: Record<string, string>) => string;
}

export type StripeRevenue =
  | {
      ok: true;
      record: RevenueData;
      /** A record id derived from the Stripe event id: pass it to `track` so redeliveries keep it. */
      id: string;
    }
  | { ok: false; ignored: string };
