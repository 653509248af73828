// The cohort report of docs/revenue.md on its own (no warehouse): the worked example's cohort table, the
// LTV of its months, and properties of random histories against the MRR report's own fold.
import { formatMicros, toMicros } from '@tally/contract';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthsBetween, utcMonthOf } from '../calendar.ts';
import { WORKED_EXAMPLE_COHORTS, workedExample } from '../testing.ts';
import { revenueCohorts } from './cohorts.ts';
import { RateTable } from './exchange-rates.ts';
import { byRecordTime, type MrrInput, MrrLedger } from './ledger.ts';
import { monthlyRevenue } from './monthly.ts';

const WORKED_EXAMPLE: MrrInput[] = workedExample('cohorts').map((data, i) => ({
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

describe('revenueCohorts', () => {
  it("gives the worked example's cohort table, in any record order", () => {
    expect(revenueCohorts(WORKED_EXAMPLE, '2026-01', '2026-04', { currency: 'USD' })).toEqual(
      WORKED_EXAMPLE_COHORTS,
    );
    expect(revenueCohorts([...WORKED_EXAMPLE].reverse(), '2026-01', '2026-04', { currency: 'USD' })).toEqual(
      WORKED_EXAMPLE_COHORTS,
    );
  });

  it('shows only the cohorts of the range, each up to `to`, and none of another currency', () => {
    const report = revenueCohorts(WORKED_EXAMPLE, '2026-02', '2026-03', { currency: 'USD' });
    expect(report.cohorts).toEqual([
      { ...WORKED_EXAMPLE_COHORTS.cohorts[1], months: WORKED_EXAMPLE_COHORTS.cohorts[1]?.months.slice(0, 2) },
    ]);
    expect(revenueCohorts(WORKED_EXAMPLE, '2026-01', '2026-04', { currency: 'EUR' }).cohorts).toEqual([]);
  });

  it("with convert_to, adds a customer's currencies up at each month's rate; its cohort is its earliest", () => {
    // The example in USD, and A also paying 10 EUR a month from March; EUR's rate loaded for March only.
    const eur = (day: string, impact: number, n: number): MrrInput => ({
      ...(WORKED_EXAMPLE[0] as MrrInput),
      transaction_id: `eur_${n}`,
      currency: 'EUR',
      amount: toMicros(impact),
      mrr_impact: toMicros(impact),
      timestamp: Date.parse(`${day}T12:00:00Z`),
    });
    const records = [...WORKED_EXAMPLE, eur('2026-03-02', 10, 1), eur('2026-04-20', 5, 2)];
    const table = new RateTable('USD', [{ base: 'USD', currency: 'EUR', period: '2026-03', rate: '1.5' }]);
    const report = revenueCohorts(records, '2026-01', '2026-04', { currency: 'USD', table });
    expect(report.converted_to).toBe('USD');
    expect(report.rates).toEqual([{ currency: 'EUR', period: '2026-03', rate: '1.5' }]);
    expect(report.missing_currencies).toEqual(['EUR']); // April: no EUR rate, left out
    const january = report.cohorts[0];
    expect(january?.size).toBe(2);
    expect(january?.months.map((m) => m.mrr)).toEqual(['150', '180', '165', '190']);
    expect(january?.months[2]?.gross_mrr_retention).toBe(100 / 150);
    expect(report.cohorts[1]?.months.map((m) => m.mrr)).toEqual(['100', '100', '100']);
  });

  it("gives the worked example's LTV per month (null while no customer has churned)", () => {
    expect(monthlyRevenue(WORKED_EXAMPLE, '2026-01', '2026-04').map((m) => m.ltv)).toEqual([
      null,
      null,
      '750',
      '870',
    ]);
    // The two months before `from` count even when the report starts later.
    expect(monthlyRevenue(WORKED_EXAMPLE, '2026-04', '2026-04').map((m) => m.ltv)).toEqual(['870']);
  });
});

const JANUARY = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const record = fc.record({
  customer: fc.constantFrom('c1', 'c2', 'c3', 'c4', 'c5', 'c6'),
  subscription: fc.constantFrom('', 's2'),
  day: fc.integer({ min: 0, max: 180 }),
  kind: fc.constantFrom('impact', 'churn', 'purchase'),
  impact: fc.integer({ min: -80, max: 120 }),
});

describe('revenueCohorts on random histories', () => {
  it('sizes add up to the customers who ever paid; month 0 is the cohort; MRR is the MRR report’s', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), (drawn) => {
        const records: MrrInput[] = drawn.map((d, i) => ({
          transaction_id: `tx_${i}`,
          customer_id: d.customer,
          customer_subscription_id: d.subscription,
          event_type: d.kind === 'churn' ? 'churn' : d.kind === 'purchase' ? 'purchase' : 'subscription',
          currency: 'USD',
          amount: toMicros(Math.abs(d.impact)),
          mrr_impact: d.kind === 'impact' ? toMicros(d.impact) : null,
          is_recurring: d.kind === 'impact' ? true : null,
          interval: '',
          timestamp: JANUARY + d.day * DAY,
          received_at: JANUARY + i,
        }));
        const report = revenueCohorts(records, '2026-01', '2026-06', { currency: 'USD' });
        // The customers who ever had MRR above 0, and each one's MRR at every month end, by the ledger.
        const ledger = new MrrLedger('USD');
        const cohortOf = new Map<string, string>();
        const months = monthsBetween('2026-01', '2026-06');
        const ordered = [...records].sort(byRecordTime);
        for (const r of ordered) {
          ledger.apply(r);
          if (ledger.customerMrr(r.customer_id) > 0n && !cohortOf.has(r.customer_id))
            cohortOf.set(r.customer_id, utcMonthOf(r.timestamp));
        }
        // A later `from` gives the same cohorts from it on (their customers' earlier history still folded).
        expect(revenueCohorts(records, '2026-03', '2026-06', { currency: 'USD' }).cohorts).toEqual(
          report.cohorts.filter((c) => c.cohort >= '2026-03'),
        );
        expect(report.cohorts.reduce((n, c) => n + c.size, 0)).toBe(cohortOf.size);
        for (const cohort of report.cohorts) {
          const first = cohort.months[0];
          expect(first?.offset).toBe(0);
          expect(cohort.months).toHaveLength(months.length - months.indexOf(cohort.cohort));
          // Month 0: every customer of the cohort paid in it; those still paying at its end are retained.
          expect(first?.logo_retention).toBe((first?.customers ?? 0) / cohort.size);
          if (first?.customers === cohort.size) expect(first.logo_retention).toBe(1);
          const base = toMicros(first?.mrr ?? '0');
          for (const m of cohort.months) {
            // Net MRR retention × month-0 MRR is the cohort's MRR at that offset…
            if (m.net_mrr_retention === null) expect(base).toBe(0n);
            else expect(m.net_mrr_retention).toBe(Number(toMicros(m.mrr)) / Number(base));
            expect(m.gross_mrr_retention === null || m.gross_mrr_retention <= 1).toBe(true);
          }
        }
        // …and that MRR is the MRR report's for those customers: the report of only their records.
        for (const cohort of report.cohorts) {
          const members = new Set([...cohortOf].filter(([, c]) => c === cohort.cohort).map(([id]) => id));
          expect(members.size).toBe(cohort.size);
          const monthly = monthlyRevenue(
            records.filter((r) => members.has(r.customer_id)),
            '2026-01',
            '2026-06',
            ['USD'],
          );
          for (const m of cohort.months) {
            expect(m.mrr).toBe(monthly.find((row) => row.month === m.month)?.mrr_end);
            expect(m.customers).toBe(monthly.find((row) => row.month === m.month)?.customers_end);
          }
          expect(formatMicros(toMicros(cohort.months[0]?.mrr ?? '0'))).toBe(cohort.months[0]?.mrr);
        }
      }),
      { numRuns: 200 },
    );
  });
});
