// Maps Stripe webhook events to Tally revenue records. Pure (no network, no Stripe SDK): the types below
// name only the fields read, so any Stripe event object, from the `stripe` package or parsed JSON, fits.
// Reads both the older Invoice shape (`invoice.subscription`, `line.price`) and the one of API versions from
// 2025-03-31 on (`invoice.parent.subscription_details`, `line.pricing`).
//
//   invoice.paid                   billing_reason subscription_create → subscription (mrr_impact = its MRR)
//                                                  subscription_cycle  → renewal (mrr_impact 0)
//                                                  subscription_update → upgrade / downgrade by the sign of
//                                                                        the invoice total (the proration)
//                                                  manual, anything else → purchase
//   customer.subscription.updated  a price or quantity change → upgrade / downgrade, mrr_impact = new − old
//                                  MRR (old from previous_attributes)
//   customer.subscription.deleted  → churn, mrr_impact = −MRR, amount 0
//   charge.refunded                → refund, amount = −(this refund)
//
// Stripe amounts are integers in the currency's minor unit (cents; yen for zero-decimal currencies) and
// currencies are lower-case; records carry major units and upper-case ISO codes.
import type { RevenueData, RevenueEventType } from '@tally/contract';
import { recordIdFor } from './record-id.ts';

type Id = string | { id: string } | null | undefined;
type Metadata = Record<string, string> | null | undefined;
type Interval = 'day' | 'week' | 'month' | 'year';

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
  ended_at?: number | null;
  canceled_at?: number | null;
}
export interface StripeInvoiceLine {
  amount: number;
  proration?: boolean;
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
}
export interface StripeCharge {
  id: string;
  customer: Id;
  currency: string;
  amount: number;
  amount_refunded: number;
  payment_intent?: Id;
  metadata?: Metadata;
  refunds?: { data: Array<{ id: string; amount: number; created: number }> } | null;
}
/** A Stripe webhook event; `data.object` is narrowed by `type`. */
export interface StripeEventLike {
  id: string;
  type: string;
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

// Metadata keys an application can set on Stripe objects (Checkout Session → subscription/payment intent)
// to attribute revenue to the browser session: the tracker's getSessionId(), and a visitor id if it has one.
export const METADATA_KEYS = {
  customerId: 'tally_customer_id',
  visitorFingerprint: 'tally_visitor_fingerprint',
  sessionId: 'tally_session_id',
} as const;

/** Stripe's zero-decimal and three-decimal currencies; every other one has two decimals. */
const ZERO_DECIMAL = new Set('BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF'.split(' '));
const THREE_DECIMAL = new Set('BHD JOD KWD OMR TND'.split(' '));

/** A Stripe amount in minor units as major units of its currency (4999 USD → 49.99; 500 JPY → 500). */
export function fromMinorUnits(amount: number, currency: string): number {
  const code = currency.toUpperCase();
  const decimals = ZERO_DECIMAL.has(code) ? 0 : THREE_DECIMAL.has(code) ? 3 : 2;
  return Number((amount / 10 ** decimals).toFixed(decimals));
}

const idOf = (value: Id): string | undefined =>
  typeof value === 'string' ? value : (value?.id ?? undefined);

const MONTHS_PER: Record<Interval, number> = { day: 12 / 365, week: 12 / 52, month: 1, year: 12 };
const months = (interval: Interval, count: number | null | undefined) => MONTHS_PER[interval] * (count || 1);

/** Monthly amount of one subscription item, in minor units (metered and tiered prices, without a unit amount, count 0). */
function itemMrr(item: StripeSubscriptionItem): number {
  const quantity = item.quantity ?? 1;
  const price = item.price;
  if (price?.recurring) {
    const unit = price.unit_amount ?? Number(price.unit_amount_decimal ?? 0);
    return (unit * quantity) / months(price.recurring.interval, price.recurring.interval_count);
  }
  if (item.plan)
    return ((item.plan.amount ?? 0) * quantity) / months(item.plan.interval, item.plan.interval_count);
  return 0;
}
const subscriptionMrr = (items: StripeSubscriptionItem[]) =>
  items.reduce((sum, item) => sum + itemMrr(item), 0);

/** Monthly amount of an invoice's subscription lines (prorations excluded), in minor units. */
function invoiceMrr(invoice: StripeInvoice): number {
  let total = 0;
  for (const line of invoice.lines?.data ?? []) {
    const proration = line.proration ?? line.parent?.subscription_item_details?.proration ?? false;
    const isSubscription = line.type === 'subscription' || line.parent?.type === 'subscription_item_details';
    if (proration || !isSubscription) continue;
    const recurring = line.price?.recurring ?? line.plan;
    // Newer API versions name only the price id on a line: the billing period gives the interval.
    const lineMonths = recurring
      ? months(recurring.interval, recurring.interval_count)
      : line.period
        ? periodMonths(line.period.end - line.period.start)
        : 1;
    total += line.amount / lineMonths;
  }
  return total;
}

/** Months in a billing period of `seconds`: whole months for monthly and longer plans, a fraction for shorter. */
function periodMonths(seconds: number): number {
  const exact = seconds / 86_400 / (365.25 / 12);
  return exact >= 0.9 ? Math.round(exact) : exact;
}

function planName(items: StripeSubscriptionItem[]): string | undefined {
  const item = items[0];
  const price = item?.price;
  return price?.nickname ?? price?.lookup_key ?? item?.plan?.nickname ?? price?.id ?? item?.plan?.id;
}

function interval(items: StripeSubscriptionItem[]): string | undefined {
  const recurring = items[0]?.price?.recurring ?? items[0]?.plan;
  if (!recurring) return undefined;
  const count = recurring.interval_count ?? 1;
  const name = { day: 'daily', week: 'weekly', month: 'monthly', year: 'annual' }[recurring.interval];
  return count === 1 ? name : `every ${count} ${recurring.interval}s`;
}

/** Maps one Stripe webhook event to a revenue record, or says why it carries none. */
export function revenueFromStripeEvent(
  event: StripeEventLike,
  options: StripeMappingOptions = {},
): StripeRevenue {
  const base = (customer: Id, currency: string, metadata: Record<string, string>) => {
    const stripeCustomer = idOf(customer);
    if (!stripeCustomer) return undefined;
    return {
      customer_id:
        options.customerId?.(stripeCustomer, metadata) ?? metadata.tally_customer_id ?? stripeCustomer,
      // The contract needs a visitor and a session. A webhook has neither unless the application put them in
      // the metadata; otherwise a stable per-customer stand-in, and attribution goes through identify.
      visitor_fingerprint: metadata.tally_visitor_fingerprint || `stripe:${stripeCustomer}`,
      session_id: metadata.tally_session_id || `stripe:${stripeCustomer}`,
      currency: currency.toUpperCase(),
      payment_processor: 'stripe',
    };
  };
  const ok = (record: RevenueData): StripeRevenue => ({
    ok: true,
    record,
    id: recordIdFor(`stripe:${event.id}`),
  });
  const ignored = (reason: string): StripeRevenue => ({
    ok: false,
    ignored: `${event.type} ${event.id}: ${reason}`,
  });
  const noCustomer = ignored('no customer to attribute it to');

  switch (event.type) {
    case 'invoice.paid': {
      const invoice = event.data.object as StripeInvoice;
      const details = invoice.parent?.subscription_details;
      const metadata = {
        ...invoice.subscription_details?.metadata,
        ...details?.metadata,
        ...invoice.metadata,
      };
      const common = base(invoice.customer, invoice.currency, metadata);
      if (!common) return noCustomer;
      const subscriptionId = idOf(invoice.subscription) ?? idOf(details?.subscription);
      const money = (minor: number) => fromMinorUnits(minor, invoice.currency);
      const record = (eventType: RevenueEventType, amount: number, extra: Partial<RevenueData> = {}) =>
        ok({
          ...common,
          amount: money(amount),
          transaction_id: invoice.id,
          event_type: eventType,
          customer_subscription_id: subscriptionId ?? null,
          is_recurring: subscriptionId !== undefined,
          metadata: { stripe_event_id: event.id, billing_reason: invoice.billing_reason ?? null },
          ...extra,
        });
      switch (invoice.billing_reason) {
        case 'subscription_create':
          if (invoice.amount_paid <= 0) return ignored('nothing paid (a trial or a free first invoice)');
          return record('subscription', invoice.amount_paid, { mrr_impact: money(invoiceMrr(invoice)) });
        case 'subscription_cycle':
          if (invoice.amount_paid <= 0) return ignored('nothing paid');
          return record('renewal', invoice.amount_paid, { mrr_impact: 0 });
        case 'subscription_update':
          // The proration invoice: positive when the customer paid for more, negative when credited for less.
          // Its MRR movement is on customer.subscription.updated, so it is not counted twice here.
          if (invoice.total > 0)
            return record('upgrade', invoice.amount_paid > 0 ? invoice.amount_paid : invoice.total);
          if (invoice.total < 0) return record('downgrade', -invoice.total);
          return ignored('proration of zero');
        default:
          if (invoice.amount_paid <= 0) return ignored('nothing paid');
          return record('purchase', invoice.amount_paid, { is_recurring: false });
      }
    }

    case 'customer.subscription.updated': {
      const subscription = event.data.object as StripeSubscription;
      const previous = (event.data.previous_attributes ?? {}) as {
        items?: { data: StripeSubscriptionItem[] };
        plan?: StripePlan;
        quantity?: number;
      };
      if (!previous.items && !previous.plan && previous.quantity === undefined) {
        return ignored('no change of price or quantity');
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
      if (delta === 0) return ignored('the monthly recurring revenue did not change');
      const common = base(subscription.customer, subscription.currency, subscription.metadata ?? {});
      if (!common) return noCustomer;
      return ok({
        ...common,
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
          interval: interval(current) ?? null,
        },
      });
    }

    case 'customer.subscription.deleted': {
      const subscription = event.data.object as StripeSubscription;
      if (subscription.status === 'incomplete_expired') return ignored('the subscription never started');
      const endedAt = subscription.ended_at ?? subscription.canceled_at;
      if (subscription.trial_end && endedAt && endedAt <= subscription.trial_end) {
        return ignored('cancelled during its trial (it never brought revenue)');
      }
      const mrr = fromMinorUnits(subscriptionMrr(subscription.items.data), subscription.currency);
      const common = base(subscription.customer, subscription.currency, subscription.metadata ?? {});
      if (!common) return noCustomer;
      return ok({
        ...common,
        amount: 0, // no money moves when a subscription ends; the loss is mrr_impact
        mrr_impact: -mrr,
        transaction_id: event.id,
        event_type: 'churn',
        customer_subscription_id: subscription.id,
        is_recurring: true,
        metadata: {
          stripe_event_id: event.id,
          plan: planName(subscription.items.data) ?? null,
          interval: interval(subscription.items.data) ?? null,
        },
      });
    }

    case 'charge.refunded': {
      const charge = event.data.object as StripeCharge;
      // amount_refunded is cumulative: this refund is the increase since the previous state.
      const before = (event.data.previous_attributes as { amount_refunded?: number } | undefined)
        ?.amount_refunded;
      const latest = charge.refunds?.data?.[0];
      const refunded =
        before !== undefined ? charge.amount_refunded - before : (latest?.amount ?? charge.amount_refunded);
      if (refunded <= 0) return ignored('nothing refunded');
      const common = base(charge.customer, charge.currency, charge.metadata ?? {});
      if (!common) return noCustomer;
      return ok({
        ...common,
        amount: -fromMinorUnits(refunded, charge.currency),
        transaction_id: latest?.id ?? `${charge.id}:refunded:${charge.amount_refunded}`,
        event_type: 'refund',
        is_recurring: false,
        metadata: {
          stripe_event_id: event.id,
          charge: charge.id,
          payment_intent: idOf(charge.payment_intent) ?? null,
        },
      });
    }

    default:
      return ignored('not a revenue event');
  }
}
