// The daily MRR report against the monthly one, on random histories (fast-check): records at any time of
// day (midnight exactly included), several subscriptions, currencies and out-of-order delivery. The last
// day of every month has the month's mrr_end exactly, a month's daily movements, net new and cash add up
// exactly to its monthly figures, and a range that starts mid-history gives the same days as a longer one.
// The same property runs through real chDB: records stored in the revenue table, read back by readMrrInputs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatMicros, toMicros } from '@tally/contract';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDayRange, dailyRevenue } from './daily.ts';
import { readMrrInputs } from './history.ts';
import type { MrrInput } from './ledger.ts';
import { type MonthlyRevenue, monthlyRevenue, mrrReport } from './monthly.ts';
import { RevenueQueryError } from './scope.ts';

const MONEY_FIELDS = [
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'net_new',
  'cash_revenue',
] as const;

const money = fc
  .tuple(fc.integer({ min: -200_000, max: 200_000 }), fc.integer({ min: 0, max: 6 }))
  .map(([n, places]) => formatMicros(BigInt(n) * 10n ** BigInt(6 - Math.min(places, 6)) * 7n));

const drawnRecord = fc.record({
  month: fc.integer({ min: 1, max: 3 }),
  day: fc.integer({ min: 1, max: 31 }),
  // Minutes into the day; 0 is midnight exactly, which belongs to the day that starts then.
  minute: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1439 })),
  customer: fc.constantFrom('A', 'B', 'C', 'D'),
  subscription: fc.constantFrom('', 's1'),
  currency: fc.constantFrom('USD', 'USD', 'EUR'),
  event_type: fc.constantFrom(
    'subscription',
    'upgrade',
    'downgrade',
    'churn',
    'renewal',
    'purchase',
    'refund',
  ),
  amount: money,
  mrr_impact: fc.option(money, { nil: null }),
  is_recurring: fc.option(fc.boolean(), { nil: null }),
  interval: fc.constantFrom('', 'monthly', 'annual'),
  arrival: fc.integer({ min: 0, max: 1_000_000 }),
});
type Drawn = typeof drawnRecord extends fc.Arbitrary<infer T> ? T : never;

function timestampOf(r: Drawn): number {
  // Days past a month's end roll into the next month (31 Feb is 3 Mar): every day gets records.
  return Date.UTC(2026, r.month - 1, r.day) + r.minute * 60_000;
}

function toInputs(drawn: readonly Drawn[]): MrrInput[] {
  return drawn.map((r, i) => ({
    transaction_id: `tx_${i}`,
    customer_id: r.customer,
    customer_subscription_id: r.subscription,
    event_type: r.event_type as MrrInput['event_type'],
    currency: r.currency,
    amount: toMicros(r.amount),
    mrr_impact: r.mrr_impact === null ? null : toMicros(r.mrr_impact),
    is_recurring: r.is_recurring,
    interval: r.interval,
    timestamp: timestampOf(r),
    received_at: Date.UTC(2026, 5, 1) + r.arrival,
  }));
}

/** Checks the daily report of Jan–Apr 2026 against the monthly report of the same months. */
function expectDailyMatchesMonthly(
  daily: ReturnType<typeof dailyRevenue>,
  monthly: readonly MonthlyRevenue[],
): void {
  for (const month of monthly) {
    const days = daily.filter((d) => d.currency === month.currency && d.date.startsWith(month.month));
    expect(days.length).toBeGreaterThanOrEqual(28);
    const last = days.at(-1);
    expect(last?.mrr, `${month.month} ${month.currency} mrr_end`).toBe(month.mrr_end);
    expect(last?.arr).toBe(formatMicros(toMicros(month.mrr_end) * 12n));
    expect(last?.paying_customers).toBe(month.customers_end);
    for (const field of MONEY_FIELDS) {
      const sum = days.reduce((s, d) => s + toMicros(d[field]), 0n);
      expect(formatMicros(sum), `${month.month} ${month.currency} ${field}`).toBe(month[field]);
    }
  }
}

describe('dailyRevenue', () => {
  it('ends every month on the monthly mrr_end, and its days sum to the monthly movements (property)', () => {
    fc.assert(
      fc.property(fc.array(drawnRecord, { maxLength: 40 }), (drawn) => {
        const records = toInputs(drawn);
        const monthly = monthlyRevenue(records, '2026-01', '2026-04');
        const daily = dailyRevenue(records, '2026-01-01', '2026-04-30');
        expect(daily).toHaveLength(120 * new Set(monthly.map((m) => m.currency)).size);
        expectDailyMatchesMonthly(daily, monthly);
        // A range that starts mid-history carries the MRR before it: the same days as the longer range.
        const march = dailyRevenue(records, '2026-03-01', '2026-03-31');
        expect(march).toEqual(daily.filter((d) => d.date.startsWith('2026-03')));
        // Delivered in another order, the same figures.
        expect(dailyRevenue([...records].reverse(), '2026-01-01', '2026-04-30')).toEqual(daily);
      }),
      { numRuns: 200 },
    );
  });

  it('puts a record at midnight exactly in the day that starts then', () => {
    const records = toInputs([
      {
        month: 1,
        day: 2,
        minute: 0,
        customer: 'A',
        subscription: '',
        currency: 'USD',
        event_type: 'subscription',
        amount: '10',
        mrr_impact: '10',
        is_recurring: true,
        interval: '',
        arrival: 0,
      },
    ]);
    const [first, second] = dailyRevenue(records, '2026-01-01', '2026-01-02', ['USD']);
    expect(first).toMatchObject({ date: '2026-01-01', mrr: '0', new: '0', paying_customers: 0 });
    expect(second).toMatchObject({
      date: '2026-01-02',
      mrr: '10',
      arr: '120',
      new: '10',
      net_new: '10',
      cash_revenue: '10',
      paying_customers: 1,
    });
  });

  it('refuses bad days and ranges longer than 366 days', () => {
    for (const [from, to] of [
      ['2026-02-30', '2026-03-01'],
      ['2026-1-01', '2026-01-02'],
      ['2026-03-01', '2026-02-01'],
      ['2025-01-01', '2026-01-02'],
      ['', '2026-01-01'],
    ] as const) {
      expect(() => checkDayRange(from, to), `${from}..${to}`).toThrow(RevenueQueryError);
    }
    expect(() => checkDayRange('2024-01-01', '2024-12-31')).not.toThrow(); // 366 days, a leap year
  });
});

describe('dailyRevenue on chDB', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-daily-revenue-'));
  let warehouse: Warehouse;
  let run = 0;

  beforeAll(async () => {
    warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
    await migrate(warehouse);
  }, 60_000);
  afterAll(async () => {
    await warehouse?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives month ends equal to `tally report mrr` for random stored histories (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(drawnRecord, { minLength: 1, maxLength: 25 }), async (drawn) => {
        const project = `daily-${++run}`;
        const inputs = toInputs(drawn);
        await warehouse.insert(
          'revenue',
          inputs.map((r, i) => ({
            project_id: project,
            id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
            transaction_id: r.transaction_id,
            customer_id: r.customer_id,
            customer_subscription_id: r.customer_subscription_id,
            event_type: r.event_type,
            currency: r.currency,
            amount: formatMicros(r.amount),
            mrr_impact: r.mrr_impact === null ? null : formatMicros(r.mrr_impact),
            is_recurring: r.is_recurring,
            visitor_id: '',
            session_id: '',
            payment_processor: 'stripe',
            timestamp_clamped: false,
            metadata: r.interval ? { interval: r.interval } : {},
            payload: '{}',
            user_agent: '',
            timestamp: r.timestamp,
            received_at: r.received_at,
          })),
        );
        const stored = await readMrrInputs(warehouse, { project });
        const monthly = await mrrReport(warehouse, { project, from: '2026-01', to: '2026-04' });
        expectDailyMatchesMonthly(dailyRevenue(stored, '2026-01-01', '2026-04-30'), monthly);
      }),
      { numRuns: 8 },
    );
  }, 120_000);
});
