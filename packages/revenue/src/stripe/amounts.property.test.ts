// Property: whatever the prices, quantities, intervals and currency of a subscription, the MRR numbers the
// mappers put in records are stored exactly (at most 6 decimals, 15 significant digits), as the contract
// requires. MRR divides prices by 12, by 12/52 or by 12/365; the mappers round once, after the arithmetic.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inexactFields } from './fixture-events.ts';
import { subscriptionDeleted } from './subscription-deleted.ts';
import { subscriptionUpdated } from './subscription-updated.ts';
import type { StripeEventLike, StripeSubscriptionItem } from './types.ts';

const item = fc.record({
  price: fc.record({
    id: fc.constant('price_x'),
    unit_amount: fc.integer({ min: 0, max: 99_999_999 }),
    recurring: fc.record({
      interval: fc.constantFrom('day', 'week', 'month', 'year') as fc.Arbitrary<
        'day' | 'week' | 'month' | 'year'
      >,
      interval_count: fc.integer({ min: 1, max: 12 }),
    }),
  }),
  quantity: fc.integer({ min: 1, max: 1000 }),
});
const items = fc.array(item, { minLength: 1, maxLength: 4 });
const currency = fc.constantFrom('usd', 'eur', 'jpy', 'kwd', 'bhd', 'krw');

const subscriptionEvent = (
  type: string,
  current: StripeSubscriptionItem[],
  currencyCode: string,
  previous?: StripeSubscriptionItem[],
): StripeEventLike => ({
  id: 'evt_prop',
  type,
  created: 1_767_225_600,
  data: {
    object: { id: 'sub_prop', customer: 'cus_prop', currency: currencyCode, items: { data: current } },
    ...(previous ? { previous_attributes: { items: { data: previous } } } : {}),
  },
});

describe('MRR in records is stored exactly', () => {
  it('churn', () => {
    fc.assert(
      fc.property(items, currency, (current, code) => {
        const result = subscriptionDeleted(
          subscriptionEvent('customer.subscription.deleted', current, code),
          {},
        );
        expect(result.ok && inexactFields(result.record)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('upgrade and downgrade', () => {
    fc.assert(
      fc.property(items, items, currency, (current, previous, code) => {
        const event = subscriptionEvent('customer.subscription.updated', current, code, previous);
        const result = subscriptionUpdated(event, {});
        if (result.ok) expect(inexactFields(result.record)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
