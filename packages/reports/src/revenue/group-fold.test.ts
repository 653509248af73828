// groupFold sums a fold's customers per group as Numbers when that is exact and as BigInt otherwise. On
// random histories (fast-check) with amounts from cents to past 2^53 micro-units, every row and the total
// equal a plain BigInt sum of the customers' figures, the rows add up to the total, and an attribution asked
// for twice over the same fold and touches is the same answer.
import { formatMicros, toMicros } from '@tally/contract';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { revenueAttribution } from './attribution.ts';
import { MOVEMENT_KINDS, type MrrInput } from './ledger.ts';
import { groupFold } from './money.ts';
import { foldPeriod, movementSum } from './period.ts';

const FIGURES = [
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'mrr_end',
  'cash_revenue',
] as const;

/** Whole units: small ones, and ones whose micro-units are past what a double holds exactly. */
const amount = fc.oneof(
  fc.integer({ min: -5_000, max: 5_000 }).map((n) => `${n}.25`),
  fc.bigInt({ min: 9_000_000_000n, max: 40_000_000_000n }).map((n) => `${n}.000001`),
);

const drawnRecord = fc.record({
  month: fc.integer({ min: 1, max: 4 }),
  day: fc.integer({ min: 1, max: 28 }),
  customer: fc.constantFrom('A', 'B', 'C', 'D', 'E'),
  event_type: fc.constantFrom(
    'subscription',
    'upgrade',
    'downgrade',
    'churn',
    'renewal',
    'purchase',
    'refund',
  ),
  amount,
  mrr_impact: fc.option(amount, { nil: null }),
});

const toInputs = (drawn: ReadonlyArray<typeof drawnRecord extends fc.Arbitrary<infer T> ? T : never>) =>
  drawn.map(
    (r, i): MrrInput => ({
      transaction_id: `tx_${i}`,
      customer_id: r.customer,
      customer_subscription_id: '',
      event_type: r.event_type as MrrInput['event_type'],
      currency: 'USD',
      amount: toMicros(r.amount),
      mrr_impact: r.mrr_impact === null ? null : toMicros(r.mrr_impact),
      is_recurring: null,
      interval: '',
      timestamp: Date.UTC(2026, r.month - 1, r.day),
      received_at: Date.UTC(2026, 5, 1) + i,
    }),
  );

describe('groupFold', () => {
  it('sums exactly, as Numbers or past 2^53 as BigInt, and the rows add up to the total (property)', () => {
    fc.assert(
      fc.property(fc.array(drawnRecord, { minLength: 1, maxLength: 30 }), (drawn) => {
        const fold = foldPeriod(toInputs(drawn), { from: '2026-02', to: '2026-04', currency: 'USD' });
        const keyOf = (customer: string) => (customer < 'C' ? 'early' : 'late');
        const { rows, total } = groupFold(fold, keyOf);
        const expected = (customers: string[]) => {
          const sums = FIGURES.map(() => 0n);
          for (const id of customers) {
            const c = fold.customers.get(id);
            if (!c) continue;
            MOVEMENT_KINDS.forEach((kind, i) => {
              (sums[i] as bigint) += movementSum(c, kind);
            });
            (sums[5] as bigint) += c.mrr_end;
            (sums[6] as bigint) += c.cash;
          }
          return sums.map(formatMicros);
        };
        const all = [...fold.customers.keys()];
        expect(FIGURES.map((f) => total[f])).toEqual(expected(all));
        expect(total.customers).toBe(all.length);
        for (const row of rows) {
          expect(FIGURES.map((f) => row[f])).toEqual(expected(all.filter((c) => keyOf(c) === row.key)));
        }
        for (const f of FIGURES) {
          const sum = rows.reduce((s, row) => s + toMicros(row[f]), 0n);
          expect(formatMicros(sum)).toBe(total[f]);
        }
        expect(rows.reduce((s, row) => s + row.paying_customers, 0)).toBe(total.paying_customers);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps an attribution per frozen history and touches: asked again, the same answer', () => {
    const records = Object.freeze(
      toInputs([
        { month: 2, day: 3, customer: 'A', event_type: 'subscription', amount: '10.25', mrr_impact: '10.25' },
        { month: 3, day: 3, customer: 'B', event_type: 'subscription', amount: '20.25', mrr_impact: '20.25' },
      ]),
    );
    const touches = new Map();
    const ask = () =>
      revenueAttribution(records, {
        from: '2026-02',
        to: '2026-04',
        currency: 'USD',
        by: 'channel',
        touch: 'first',
        touches,
      });
    const first = ask();
    expect(first.total.mrr_end).toBe('30.5');
    expect(ask()).toBe(first);
    // Other touches (a refreshed cache hands out a new map): computed again.
    expect(
      revenueAttribution(records, {
        from: '2026-02',
        to: '2026-04',
        currency: 'USD',
        by: 'channel',
        touch: 'first',
        touches: new Map(),
      }),
    ).not.toBe(first);
  });
});
