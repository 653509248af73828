// Attribution, the breakdown and the MRR report converted with the operator's rates: a worked example of
// two currencies whose every figure is computed by hand (each amount at its own month's rate, the MRR at
// the end at the last month's, a currency without a rate left out and named), and properties over random
// histories: converted to their own single currency at rate 1 they equal the unconverted answers, and the
// groups always add up to the total.
import { toMicros } from '@tally/contract';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { convertedRevenueAttribution, revenueAttribution } from './attribution.ts';
import { convertedRevenueBreakdown, revenueBreakdown } from './breakdown.ts';
import { convertMonthly, RateTable } from './exchange-rates.ts';
import type { MrrInput } from './ledger.ts';
import { monthlyRevenue } from './monthly.ts';

const record = (
  customer: string,
  currency: string,
  date: string,
  amount: string,
  mrr: string | null,
  event: MrrInput['event_type'] = 'subscription',
): MrrInput => ({
  transaction_id: `${customer}-${date}-${event}-${amount}`,
  customer_id: customer,
  customer_subscription_id: '',
  event_type: event,
  currency,
  amount: toMicros(amount),
  mrr_impact: mrr === null ? null : toMicros(mrr),
  is_recurring: mrr !== null,
  interval: '',
  timestamp: Date.parse(`${date}T10:00:00Z`),
  received_at: Date.parse(`${date}T10:00:01Z`),
});

const rates = new RateTable('EUR', [
  { base: 'EUR', currency: 'USD', period: '2026-01', rate: '0.9' },
  { base: 'EUR', currency: 'USD', period: '2026-02', rate: '0.8' },
  { base: 'EUR', currency: 'GBP', period: '2026-01', rate: '1.2' },
]);

// A (USD, plan pro): new 100 in January, expansion +50 in February. B (EUR, plan basic): new 40 in January,
// churned in February. C (GBP, plan pro): new 10 in February, for which no GBP rate is loaded.
const history = [
  record('A', 'USD', '2026-01-05', '100', '100'),
  record('A', 'USD', '2026-02-05', '150', '50'),
  record('B', 'EUR', '2026-01-10', '40', '40'),
  record('B', 'EUR', '2026-02-10', '0', '-40', 'churn'),
  record('C', 'GBP', '2026-02-12', '10', '10'),
];
const plans = new Map([
  ['A', 'pro'],
  ['B', 'basic'],
  ['C', 'pro'],
]);

describe('the breakdown converted', () => {
  it('converts each amount at its own month, the MRR at the end at the last month, and names what it left out', () => {
    const answer = convertedRevenueBreakdown(history, {
      from: '2026-01',
      to: '2026-02',
      currencies: ['EUR', 'GBP', 'USD'],
      by: 'plan',
      values: plans,
      table: rates,
    });
    expect(answer.currency).toBe('EUR');
    expect(answer.converted_to).toBe('EUR');
    expect(answer.missing_currencies).toEqual(['GBP']);
    expect(answer.rates).toEqual([
      { currency: 'USD', period: '2026-01', rate: '0.9' },
      { currency: 'USD', period: '2026-02', rate: '0.8' },
    ]);
    // pro: A's new 100 × 0.9 = 90 and expansion 50 × 0.8 = 40; MRR at the end 150 × 0.8 = 120; cash
    // 100 × 0.9 + 150 × 0.8 = 210. C (GBP) is counted but its February figures are left out.
    expect(answer.rows).toEqual([
      {
        key: 'pro',
        customers: 2,
        paying_customers: 2,
        new: '90',
        expansion: '40',
        reactivation: '0',
        contraction: '0',
        churn: '0',
        mrr_end: '120',
        cash_revenue: '210',
      },
      {
        key: 'basic',
        customers: 1,
        paying_customers: 0,
        new: '40',
        expansion: '0',
        reactivation: '0',
        contraction: '0',
        churn: '40',
        mrr_end: '0',
        cash_revenue: '40',
      },
    ]);
    expect(answer.total).toEqual({
      customers: 3,
      paying_customers: 2,
      new: '130',
      expansion: '40',
      reactivation: '0',
      contraction: '0',
      churn: '40',
      mrr_end: '120',
      cash_revenue: '250',
    });
  });
});

describe('the MRR report converted', () => {
  it('adds the customer counts of the currencies converted and computes ARPA and the churn rates from them', () => {
    const [january, february] = convertMonthly(monthlyRevenue(history, '2026-01', '2026-02'), rates);
    // January: A 90 + B 40 = 130 EUR, two paying; C has no records yet.
    expect(january).toMatchObject({
      mrr_end: '130',
      customers_start: 0,
      customers_end: 2,
      churned_customers: 0,
      arpa: '65',
      customer_churn_rate: null,
      ltv: null,
    });
    // February, every figure at February's rate: MRR at the start A 100 × 0.8 + B 40 = 120; at the end
    // A 150 × 0.8 = 120, B churned, GBP has no rate (C left out): one paying of two at the start.
    expect(february).toMatchObject({
      mrr_start: '120',
      mrr_end: '120',
      customers_start: 2,
      customers_end: 1,
      churned_customers: 1,
      arpa: '120',
      customer_churn_rate: 0.5,
      gross_revenue_churn_rate: 40 / 120,
      // ARPA ÷ mean(0.5) (January has no customers at its start, so no rate) = 240.
      ltv: '240',
      missing_currencies: ['GBP'],
    });
  });
});

// Random single-currency histories: converted to their own currency (rate 1) every answer is the same.
const arbitraryHistory = fc
  .array(
    fc.record({
      customer: fc.constantFrom('a', 'b', 'c', 'd'),
      month: fc.integer({ min: 1, max: 6 }),
      day: fc.integer({ min: 1, max: 28 }),
      mrr: fc.integer({ min: -50, max: 120 }),
    }),
    { maxLength: 30 },
  )
  .map((items) =>
    items.map(({ customer, month, day, mrr }, i) => ({
      ...record(
        customer,
        'EUR',
        `2026-0${month}-${String(day).padStart(2, '0')}`,
        String(Math.max(mrr, 0)),
        String(mrr),
      ),
      transaction_id: `t${i}`,
    })),
  );
const identity = new RateTable('EUR', []);

describe('converted to the one currency of the history', () => {
  it('equal the unconverted attribution, breakdown and MRR report', () => {
    fc.assert(
      fc.property(arbitraryHistory, (records) => {
        const values = new Map([
          ['a', 'x'],
          ['b', 'y'],
          ['c', 'x'],
        ]);
        const options = { from: '2026-02', to: '2026-05', by: 'plan', values } as const;
        const plain = revenueBreakdown(records, { ...options, currency: 'EUR' });
        const converted = convertedRevenueBreakdown(records, {
          ...options,
          currencies: ['EUR'],
          table: identity,
        });
        expect({ rows: converted.rows, total: converted.total }).toEqual({
          rows: plain.rows,
          total: plain.total,
        });
        expect(converted.missing_currencies).toEqual([]);

        const touches = new Map();
        const attribution = {
          from: '2026-02',
          to: '2026-05',
          by: 'channel',
          touch: 'first',
          touches,
        } as const;
        const a = revenueAttribution(records, { ...attribution, currency: 'EUR' });
        const b = convertedRevenueAttribution(records, {
          ...attribution,
          currencies: ['EUR'],
          table: identity,
        });
        expect({ rows: b.rows, total: b.total }).toEqual({ rows: a.rows, total: a.total });

        const report = monthlyRevenue(records, '2026-02', '2026-06');
        const months = convertMonthly(monthlyRevenue(records, '2025-12', '2026-06'), identity, '2026-02');
        expect(months.map((m) => m.month)).toEqual(report.map((m) => m.month));
        months.forEach((m, i) => {
          const r = report[i];
          expect(m).toMatchObject({
            mrr_end: r?.mrr_end,
            customers_end: r?.customers_end,
            customers_start: r?.customers_start,
            arpa: r?.arpa,
            ltv: r?.ltv,
            customer_churn_rate: r?.customer_churn_rate,
            gross_revenue_churn_rate: r?.gross_revenue_churn_rate,
            net_revenue_churn_rate: r?.net_revenue_churn_rate,
          });
        });
      }),
      { numRuns: 150 },
    );
  });
});
