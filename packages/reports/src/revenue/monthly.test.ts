// The MRR rules of docs/revenue.md on their own (no warehouse): the worked example's table, in any
// order, and each rule for records without mrr_impact.

import { formatMicros, isExactMoney, MAX_MONEY, toMicros } from '@tally/contract';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthsBetween } from '../calendar.ts';
import { WORKED_EXAMPLE_MONTHS, workedExample } from '../testing.ts';
import { type MrrInput, mrrMovements } from './ledger.ts';
import { monthlyRevenue } from './monthly.ts';

let sequence = 0;
function record(
  date: string,
  customer: string,
  event_type: MrrInput['event_type'],
  amount: number,
  mrr_impact: number | null,
  extra: Partial<MrrInput> = {},
): MrrInput {
  sequence++;
  return {
    transaction_id: `tx_${sequence}`,
    customer_id: customer,
    customer_subscription_id: '',
    event_type,
    currency: 'USD',
    amount: toMicros(amount),
    mrr_impact: mrr_impact === null ? null : toMicros(mrr_impact),
    is_recurring: null,
    interval: '',
    timestamp: Date.parse(`${date}T12:00:00Z`),
    received_at: Date.parse('2026-06-01T00:00:00Z') + sequence,
    ...extra,
  };
}

/** The worked example of docs/revenue.md, as the MRR rules read it once stored. */
const WORKED_EXAMPLE: MrrInput[] = workedExample('unit').map((data, i) => ({
  transaction_id: data.transaction_id,
  customer_id: data.customer_id,
  customer_subscription_id: data.customer_subscription_id ?? '',
  event_type: data.event_type ?? '',
  currency: data.currency ?? 'USD',
  amount: toMicros(data.amount),
  mrr_impact: data.mrr_impact === undefined || data.mrr_impact === null ? null : toMicros(data.mrr_impact),
  is_recurring: data.is_recurring ?? null,
  interval: String(data.metadata?.interval ?? ''),
  timestamp: data.timestamp as number,
  received_at: Date.parse('2026-06-01T00:00:00Z') + i,
}));

describe('monthlyRevenue', () => {
  it("gives the worked example's monthly table", () => {
    const report = monthlyRevenue(WORKED_EXAMPLE, '2026-01', '2026-04');
    expect(report).toHaveLength(4);
    report.forEach((month, i) => {
      expect(month).toMatchObject(WORKED_EXAMPLE_MONTHS[i] as object);
    });
    expect(report.flatMap((m) => m.data_warnings)).toEqual([]);
  });

  it('gives the same table whatever order the records come in', () => {
    const expected = monthlyRevenue(WORKED_EXAMPLE, '2026-01', '2026-04');
    expect(monthlyRevenue([...WORKED_EXAMPLE].reverse(), '2026-01', '2026-04')).toEqual(expected);
    const shuffled = [...WORKED_EXAMPLE].sort(
      (a, b) => a.transaction_id.localeCompare(b.transaction_id) * -1,
    );
    expect(monthlyRevenue(shuffled, '2026-01', '2026-04')).toEqual(expected);
  });

  it('starts a later range with the MRR earlier records built', () => {
    const [march] = monthlyRevenue(WORKED_EXAMPLE, '2026-03', '2026-03');
    expect(march).toMatchObject({ month: '2026-03', mrr_start: '280', mrr_end: '250', churn: '30' });
  });

  it('keeps currencies apart and reports a requested currency without records as zeros', () => {
    const eur = record('2026-01-07', 'E', 'subscription', 20, 20, { currency: 'EUR' });
    const report = monthlyRevenue([...WORKED_EXAMPLE, eur], '2026-01', '2026-01');
    expect(report.map((m) => [m.currency, m.mrr_end])).toEqual([
      ['EUR', '20'],
      ['USD', '150'],
    ]);
    const gbp = monthlyRevenue(WORKED_EXAMPLE, '2026-01', '2026-02', ['GBP']);
    expect(gbp.map((m) => [m.month, m.mrr_end, m.gross_revenue_churn_rate, m.arpa])).toEqual([
      ['2026-01', '0', null, null],
      ['2026-02', '0', null, null],
    ]);
  });
});

describe('mrrMovements without mrr_impact', () => {
  it('churn takes the whole subscription MRR: one of two subscriptions is a contraction', () => {
    const { movements } = mrrMovements([
      record('2026-01-01', 'A', 'subscription', 10, 10, { customer_subscription_id: 's1' }),
      record('2026-01-02', 'A', 'subscription', 30, 30, { customer_subscription_id: 's2' }),
      record('2026-01-03', 'A', 'churn', 0, null, { customer_subscription_id: 's2' }),
      record('2026-01-04', 'A', 'churn', 0, null, { customer_subscription_id: 's1' }),
    ]);
    expect(movements.map((m) => [m.kind, Number(m.amount) / 1e6])).toEqual([
      ['new', 10],
      ['expansion', 30],
      ['contraction', 30],
      ['churn', 10],
    ]);
  });

  it('renewal, purchase and refund change nothing; a recurring subscription adds its monthly amount', () => {
    const { movements } = mrrMovements([
      record('2026-01-01', 'A', 'subscription', 1200, null, { is_recurring: true, interval: 'annual' }),
      record('2026-01-02', 'A', 'renewal', 1200, null),
      record('2026-01-03', 'A', 'purchase', 99, null),
      record('2026-01-04', 'A', 'refund', -99, null),
      record('2026-01-05', 'B', 'subscription', 49, null, { is_recurring: true }),
      record('2026-01-06', 'C', 'subscription', 49, null, { is_recurring: false }),
    ]);
    expect(movements.map((m) => [m.customer_id, m.kind, Number(m.amount) / 1e6])).toEqual([
      ['A', 'new', 100],
      ['B', 'new', 49],
    ]);
  });

  it('an upgrade or downgrade without mrr_impact changes nothing and is a data warning', () => {
    const { movements, warnings } = mrrMovements([
      record('2026-01-01', 'A', 'subscription', 10, 10),
      record('2026-01-02', 'A', 'upgrade', 20, null),
      record('2026-01-03', 'A', 'downgrade', 5, null),
    ]);
    expect(movements).toHaveLength(1);
    expect(warnings.map((w) => w.message)).toEqual([
      'upgrade without mrr_impact: MRR unchanged',
      'downgrade without mrr_impact: MRR unchanged',
    ]);
  });

  it('a second subscription of a paying customer is expansion; coming back after churn is reactivation', () => {
    const { movements } = mrrMovements([
      record('2026-01-01', 'A', 'subscription', 10, 10, { customer_subscription_id: 's1' }),
      record('2026-01-02', 'A', 'subscription', 10, 10, { customer_subscription_id: 's2' }),
      record('2026-01-03', 'A', 'churn', 0, -10, { customer_subscription_id: 's2' }),
      record('2026-01-04', 'A', 'churn', 0, -10, { customer_subscription_id: 's1' }),
      record('2026-01-05', 'A', 'subscription', 10, 10, { customer_subscription_id: 's3' }),
    ]);
    expect(movements.map((m) => m.kind)).toEqual([
      'new',
      'expansion',
      'contraction',
      'churn',
      'reactivation',
    ]);
  });

  it("never lets a customer's MRR go below zero, and says so", () => {
    const { movements, warnings } = mrrMovements([
      record('2026-01-01', 'A', 'subscription', 10, 10),
      record('2026-01-02', 'A', 'churn', 0, -25),
      record('2026-01-03', 'A', 'subscription', 10, 10),
    ]);
    expect(movements.map((m) => [m.kind, Number(m.amount) / 1e6])).toEqual([
      ['new', 10],
      ['churn', 10],
      ['reactivation', 10],
    ]);
    expect(warnings.map((w) => w.message)).toEqual(["the customer's MRR would be -15: counted as 0"]);
  });
});

it('counts months of a range', () => {
  expect(monthsBetween('2025-11', '2026-02')).toEqual(['2025-11', '2025-12', '2026-01', '2026-02']);
});

describe('exact money near the bounds', () => {
  const bridge = (m: ReturnType<typeof monthlyRevenue>[number]) =>
    toMicros(m.new) +
    toMicros(m.expansion) +
    toMicros(m.reactivation) -
    toMicros(m.contraction) -
    toMicros(m.churn);

  it('keeps every movement and the bridge exact when MRR passes what a double holds', () => {
    const huge = MAX_MONEY; // 999999999999999, the largest mrr_impact the contract takes
    const records = [
      ...Array.from({ length: 12 }, (_, i) =>
        record(`2026-01-${String(i + 1).padStart(2, '0')}`, 'A', 'subscription', huge, huge, {
          customer_subscription_id: `s${i}`,
        }),
      ),
      record('2026-02-01', 'A', 'upgrade', 49, 49),
      record('2026-02-02', 'B', 'subscription', 999_999_999.999999, 999_999_999.999999),
      record('2026-02-03', 'A', 'downgrade', 0.000001, -0.000001),
    ];
    const [january, february] = monthlyRevenue(records, '2026-01', '2026-02');
    expect(january?.mrr_end).toBe('11999999999999988');
    expect(february).toMatchObject({
      expansion: '49',
      new: '999999999.999999',
      contraction: '0.000001',
      mrr_end: '12000001000000036.999998',
      net_new: '1000000048.999998',
      cash_revenue: '1000000049',
    });
    for (const month of [january, february]) {
      if (!month) throw new Error('missing month');
      expect(bridge(month)).toBe(toMicros(month.mrr_end) - toMicros(month.mrr_start));
      expect(toMicros(month.net_new)).toBe(toMicros(month.mrr_end) - toMicros(month.mrr_start));
    }
    // Money is decimal text without exponents (rates are fractions, and may be tiny).
    const { gross_revenue_churn_rate, net_revenue_churn_rate, customer_churn_rate, ...money } =
      february ?? {};
    expect(JSON.stringify(money)).not.toMatch(/\de[+-]?\d/i);
  });

  it('closes the bridge exactly for any records within the bounds (property)', () => {
    const money = fc
      .tuple(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 6 }))
      .map(([digits, places]) => Number(formatMicros(digits * 10n ** BigInt(6 - places))))
      .filter(isExactMoney);
    const arbitraryRecord = fc.record({
      day: fc.integer({ min: 1, max: 28 }),
      month: fc.integer({ min: 1, max: 3 }),
      customer: fc.constantFrom('A', 'B', 'C'),
      subscription: fc.constantFrom('', 's1', 's2'),
      event_type: fc.constantFrom('subscription', 'upgrade', 'downgrade', 'churn', 'renewal', 'purchase'),
      amount: money,
      mrr_impact: fc.option(money, { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(arbitraryRecord, { maxLength: 30 }), (drawn) => {
        const records = drawn.map((r) =>
          record(
            `2026-0${r.month}-${String(r.day).padStart(2, '0')}`,
            r.customer,
            r.event_type as MrrInput['event_type'],
            r.amount,
            r.mrr_impact,
            { customer_subscription_id: r.subscription },
          ),
        );
        for (const month of monthlyRevenue(records, '2026-01', '2026-03')) {
          expect(bridge(month)).toBe(toMicros(month.mrr_end) - toMicros(month.mrr_start));
          expect(toMicros(month.mrr_end) >= 0n).toBe(true);
        }
      }),
    );
  });
});
