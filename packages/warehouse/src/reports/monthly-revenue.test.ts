// The MRR rules of revenue-metrics.md on their own (no warehouse): the worked example's table, in any
// order, and each rule for records without mrr_impact.
import { describe, expect, it } from 'vitest';
import { WORKED_EXAMPLE_MONTHS, workedExample } from '../testing.ts';
import { monthlyRevenue, monthsBetween } from './monthly-revenue.ts';
import { type MrrInput, mrrMovements, parseMicros } from './mrr-movements.ts';

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
    amount: parseMicros(amount),
    mrr_impact: mrr_impact === null ? null : parseMicros(mrr_impact),
    is_recurring: null,
    interval: '',
    timestamp: Date.parse(`${date}T12:00:00Z`),
    received_at: Date.parse('2026-06-01T00:00:00Z') + sequence,
    ...extra,
  };
}

/** The worked example of revenue-metrics.md, as the MRR rules read it once stored. */
const WORKED_EXAMPLE: MrrInput[] = workedExample('unit').map((data, i) => ({
  transaction_id: data.transaction_id,
  customer_id: data.customer_id,
  customer_subscription_id: data.customer_subscription_id ?? '',
  event_type: data.event_type ?? '',
  currency: data.currency ?? 'USD',
  amount: parseMicros(data.amount),
  mrr_impact: data.mrr_impact === undefined || data.mrr_impact === null ? null : parseMicros(data.mrr_impact),
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
    expect(march).toMatchObject({ month: '2026-03', mrr_start: 280, mrr_end: 250, churn: 30 });
  });

  it('keeps currencies apart and reports a requested currency without records as zeros', () => {
    const eur = record('2026-01-07', 'E', 'subscription', 20, 20, { currency: 'EUR' });
    const report = monthlyRevenue([...WORKED_EXAMPLE, eur], '2026-01', '2026-01');
    expect(report.map((m) => [m.currency, m.mrr_end])).toEqual([
      ['EUR', 20],
      ['USD', 150],
    ]);
    const gbp = monthlyRevenue(WORKED_EXAMPLE, '2026-01', '2026-02', ['GBP']);
    expect(gbp.map((m) => [m.month, m.mrr_end, m.gross_revenue_churn_rate, m.arpa])).toEqual([
      ['2026-01', 0, null, null],
      ['2026-02', 0, null, null],
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
    expect(movements.map((m) => [m.kind, m.amount / 1e6])).toEqual([
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
    expect(movements.map((m) => [m.customer_id, m.kind, m.amount / 1e6])).toEqual([
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
    expect(movements.map((m) => [m.kind, m.amount / 1e6])).toEqual([
      ['new', 10],
      ['churn', 10],
      ['reactivation', 10],
    ]);
    expect(warnings.map((w) => w.message)).toEqual(["the customer's MRR would be -15: counted as 0"]);
  });
});

it('parses decimal text exactly', () => {
  expect([parseMicros('49.99'), parseMicros('-0.000001'), parseMicros('100'), parseMicros(0.1)]).toEqual([
    49_990_000, -1, 100_000_000, 100_000,
  ]);
  expect(monthsBetween('2025-11', '2026-02')).toEqual(['2025-11', '2025-12', '2026-01', '2026-02']);
});
