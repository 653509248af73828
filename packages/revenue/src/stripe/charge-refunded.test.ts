// The charge.refunded mapper: a refund of this refund only, negative, dated by the refund's own time when
// the event carries the refund, else by the event.
import { describe, expect, it } from 'vitest';
import { chargeRefunded } from './charge-refunded.ts';
import { fixture, mappedBy } from './fixture-events.ts';

const mapped = (name: string) => mappedBy(chargeRefunded, name);

describe('charge.refunded', () => {
  it('→ refund of this refund only (amount_refunded is cumulative), negative, dated by the event', () => {
    expect(mapped('charge.refunded.partial').record).toMatchObject({
      event_type: 'refund',
      amount: -100,
      currency: 'GBP',
      customer_id: 'cus_RZlifetime55',
      transaction_id: 'ch_3QuRef0LkdIwHu7ix1Charge:refunded:10000',
      is_recurring: false,
      metadata: {
        charge: 'ch_3QuRef0LkdIwHu7ix1Charge',
        payment_intent: 'pi_3QuRef0LkdIwHu7ix1PayInt',
        refund: null,
      },
      // 2025 API versions do not list the refunds on the charge: the event's created
      timestamp: Date.parse('2026-03-03T11:20:16Z'),
    });
  });

  it('names the refund and takes its created when the refunds are in the event, the same transaction id', () => {
    expect(mapped('charge.refunded.with_refunds').record).toMatchObject({
      amount: -199,
      // The charge and its refunded total, as without the list: what `tally import stripe` derives too.
      transaction_id: 'ch_3QuRef0LkdIwHu7ix1Charge:refunded:29900',
      metadata: { refund: 're_3QvRef2LkdIwHu7ix0Second' },
      timestamp: 1_772_726_553_000, // 2026-03-05T16:02:33Z; the event is a second later
    });
  });

  it('ignores an event in which nothing more was refunded', () => {
    const event = fixture('charge.refunded.partial');
    event.data.previous_attributes = { amount_refunded: 10000 };
    expect(chargeRefunded(event, {})).toEqual({
      ok: false,
      ignored: 'charge.refunded evt_3QuRef1LkdIwHu7ix0Refnd: nothing refunded',
    });
  });
});
