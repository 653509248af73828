// What a Stripe subscription or invoice is worth per month, and what its plan is called. Monthly amounts
// stay in minor units and unrounded here: a mapper subtracts or sums them first and converts once with
// fromMinorUnits, so no rounding error of a part reaches the record.
import type { Interval, StripeInvoice, StripeSubscriptionItem } from './types.ts';

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

/** Monthly amount of a subscription's items, in minor units. */
export const subscriptionMrr = (items: StripeSubscriptionItem[]): number =>
  items.reduce((sum, item) => sum + itemMrr(item), 0);

/** Monthly amount of an invoice's subscription lines (prorations excluded), in minor units. */
export function invoiceMrr(invoice: StripeInvoice): number {
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

/** Name of the plan of a subscription's first item: its nickname, lookup key, else its id. */
export function planName(items: StripeSubscriptionItem[]): string | undefined {
  const item = items[0];
  const price = item?.price;
  return price?.nickname ?? price?.lookup_key ?? item?.plan?.nickname ?? price?.id ?? item?.plan?.id;
}

/** Billing interval of a subscription's first item, as the `interval` metadata key names it (monthly, annual…). */
export function planInterval(items: StripeSubscriptionItem[]): string | undefined {
  const recurring = items[0]?.price?.recurring ?? items[0]?.plan;
  if (!recurring) return undefined;
  const count = recurring.interval_count ?? 1;
  const name = { day: 'daily', week: 'weekly', month: 'monthly', year: 'annual' }[recurring.interval];
  return count === 1 ? name : `every ${count} ${recurring.interval}s`;
}

/**
 * The MRR change a plan-change (proration) invoice shows, in minor units: the monthly amount of its prorated
 * lines for the new items minus that of the credited old ones (a line's sign says which). Undefined when a
 * prorated line names no recurring price (newer API versions give only the price id): the size is then unknown.
 * Used by the history import, which has the invoices but not the subscription.updated events.
 */
export function prorationMrr(invoice: StripeInvoice): number | undefined {
  let total = 0;
  let found = false;
  for (const line of invoice.lines?.data ?? []) {
    const proration = line.proration ?? line.parent?.subscription_item_details?.proration ?? false;
    if (!proration) continue;
    const recurring = line.price?.recurring ?? line.plan;
    const unit = line.price?.unit_amount ?? line.plan?.amount;
    if (!recurring || typeof unit !== 'number') return undefined;
    found = true;
    const quantity = line.quantity ?? 1;
    total +=
      (Math.sign(line.amount) * unit * quantity) / months(recurring.interval, recurring.interval_count);
  }
  return found ? total : undefined;
}
