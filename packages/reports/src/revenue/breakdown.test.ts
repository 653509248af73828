// Revenue breakdowns and filters against real chDB, on the worked example of docs/revenue.md delivered
// in reverse order with some records twice (a redelivered copy and a second record of a transaction
// already stored): the rows of every dimension add up exactly to the MRR report's figures, each customer is
// in one group (its value on its latest record that has one), filters keep exactly their customers, and
// the filtered figures of a dimension's groups add up to the unfiltered ones.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatMicros, toMicros } from '@tally/contract';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workedExample } from '../testing.ts';
import { FilterSyntaxError } from '../traffic/filters.ts';
import { revenueBreakdown } from './breakdown.ts';
import { customerList } from './customers.ts';
import { revenueDrilldown } from './drilldown.ts';
import {
  filterRevenueRecords,
  parseRevenueFilters,
  readCustomerAttributes,
  readRevenueMetadataKeys,
} from './filters.ts';
import { readMrrInputs } from './history.ts';
import { monthlyRevenue } from './monthly.ts';
import { RevenueQueryError } from './scope.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-revenue-breakdown-'));
let warehouse: Warehouse;
const PROJECT = 'breakdown';
const END_APRIL = Date.parse('2026-05-01T00:00:00Z');

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  const example = workedExample('bd');
  // C pays through paddle with a coupon; D's purchase carries a team.
  const processor = (customer: string) => (customer === 'C' ? 'paddle' : 'stripe');
  const row = (data: (typeof example)[number], received: number, extra: Record<string, string> = {}) => ({
    project_id: PROJECT,
    transaction_id: data.transaction_id,
    id: `00000000-0000-4000-8000-${String(received).padStart(12, '0')}`,
    timestamp: data.timestamp,
    received_at: Date.parse('2026-06-01T00:00:00Z') + received,
    client_timestamp: data.timestamp,
    timestamp_clamped: false,
    customer_id: data.customer_id,
    visitor_id: '',
    session_id: '',
    event_type: data.event_type ?? '',
    amount: String(data.amount),
    currency: 'USD',
    mrr_impact: typeof data.mrr_impact === 'number' ? String(data.mrr_impact) : null,
    is_recurring: data.is_recurring ?? null,
    customer_subscription_id: '',
    payment_processor: processor(data.customer_id),
    metadata: {
      ...Object.fromEntries(Object.entries(data.metadata ?? {}).map(([k, v]) => [k, String(v)])),
      ...(data.customer_id === 'C' ? { coupon: 'LAUNCH' } : {}),
      ...(data.customer_id === 'D' ? { team: 'a;b' } : {}),
      ...extra,
    },
    payload: JSON.stringify(data),
    user_agent: '',
  });
  // Reverse order, one insert each; then A's upgrade again (same record) and another record of B's
  // first transaction with a different plan: the first received stays.
  let received = 0;
  for (const data of [...example].reverse()) await warehouse.insert('revenue', [row(data, ++received)]);
  const [first, second, third] = example;
  if (!first || !second || !third) throw new Error('worked example missing');
  await warehouse.insert('revenue', [
    row(third, ++received),
    row(second, ++received, { plan: 'enterprise' }),
  ]);
  void first;
}, 60_000);

afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

const MONEY = [
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'mrr_end',
  'cash_revenue',
] as const;

async function breakdown(by: string, from = '2026-01', to = '2026-04', filters = '') {
  const until = Date.parse(`${to}-01T00:00:00Z`);
  const end = new Date(until);
  end.setUTCMonth(end.getUTCMonth() + 1);
  const all = await readMrrInputs(warehouse, { project: PROJECT, until: end.getTime(), currency: 'USD' });
  const records = await filterRevenueRecords(warehouse, all, {
    project: PROJECT,
    filters: parseRevenueFilters(filters),
    until: end.getTime(),
  });
  const values = await readCustomerAttributes(warehouse, {
    project: PROJECT,
    dimensions: [by],
    until: end.getTime(),
  });
  return revenueBreakdown(records, { from, to, currency: 'USD', by, values: values.get(by) ?? new Map() });
}

const sum = (values: string[]) => formatMicros(values.reduce((s, v) => s + toMicros(v), 0n));

describe('revenue breakdown', () => {
  it("groups each customer by its latest record's value, up to the period's end", async () => {
    const plans = await breakdown('plan');
    // A: pro, then business (its renewal has no plan: the latest with one counts); B: basic, starter,
    // churned, starter again; C: pro; D: lifetime (a purchase: no MRR).
    expect(
      Object.fromEntries(plans.rows.map((r) => [r.key, [r.customers, r.paying_customers, r.mrr_end]])),
    ).toEqual({
      business: [1, 1, '150'],
      pro: [1, 1, '100'],
      starter: [1, 1, '40'],
      lifetime: [1, 0, '0'],
    });
    // In January, A was on pro and B on basic.
    const january = await breakdown('plan', '2026-01', '2026-01');
    expect(january.rows.map((r) => [r.key, r.new])).toEqual([
      ['pro', '100'],
      ['basic', '50'],
    ]);
  });

  it("adds up exactly to the MRR report's figures for every dimension", async () => {
    const all = await readMrrInputs(warehouse, { project: PROJECT, currency: 'USD' });
    const months = monthlyRevenue(all, '2026-01', '2026-04', ['USD']);
    const last = months.at(-1) as unknown as Record<string, string>;
    for (const by of [
      'plan',
      'interval',
      'coupon',
      'source',
      'campaign',
      'payment_processor',
      'metadata.team',
    ]) {
      const result = await breakdown(by);
      for (const column of MONEY)
        expect(sum(result.rows.map((r) => r[column])), `${by} ${column}`).toBe(result.total[column]);
      expect(result.rows.reduce((s, r) => s + r.customers, 0)).toBe(4);
      expect(result.total.mrr_end).toBe(last.mrr_end);
      expect(result.total.new).toBe(
        sum(months.map((m) => (m as unknown as Record<string, string>).new ?? '0')),
      );
    }
    expect((await breakdown('payment_processor')).rows.map((r) => [r.key, r.customers])).toEqual([
      ['stripe', 3],
      ['paddle', 1],
    ]);
    expect((await breakdown('metadata.team')).rows.map((r) => r.key).sort()).toEqual(['(none)', 'a;b']);
    expect((await breakdown('source')).rows.map((r) => r.key)).toEqual(['(none)']);
  });

  it('restricts every figure to the customers a filter keeps; the groups add up to the whole', async () => {
    const pro = await breakdown('plan', '2026-01', '2026-04', 'plan==pro');
    expect(pro.rows.map((r) => r.key)).toEqual(['pro']);
    expect(pro.total.mrr_end).toBe('100');
    const notPro = await breakdown('plan', '2026-01', '2026-04', 'plan!=pro');
    expect(notPro.total.mrr_end).toBe('190');
    const escaped = await breakdown('plan', '2026-01', '2026-04', 'metadata.team==a\\;b');
    expect(escaped.rows.map((r) => [r.key, r.cash_revenue])).toEqual([['lifetime', '500']]);
    const contains = await breakdown('coupon', '2026-01', '2026-04', 'coupon~=AUN;payment_processor==paddle');
    expect(contains.total.customers).toBe(1);
    const none = await breakdown('plan', '2026-01', '2026-04', 'coupon==(none)');
    expect(none.total.customers).toBe(3);
    // Each plan's filtered figures, summed, are the unfiltered ones.
    const whole = await breakdown('plan');
    for (const column of MONEY) {
      const parts = await Promise.all(
        whole.rows.map(
          async (r) => (await breakdown('interval', '2026-01', '2026-04', `plan==${r.key}`)).total[column],
        ),
      );
      expect(sum(parts), column).toBe(whole.total[column]);
    }
  });

  it('filters drill-downs and the customer list the same way', async () => {
    const all = await readMrrInputs(warehouse, { project: PROJECT, currency: 'USD' });
    const starter = await filterRevenueRecords(warehouse, all, {
      project: PROJECT,
      filters: parseRevenueFilters('plan==starter'),
      until: END_APRIL,
    });
    const drill = revenueDrilldown(starter, {
      figure: 'cash_revenue',
      from: '2026-01',
      to: '2026-04',
      currency: 'USD',
    });
    expect(new Set(drill.items.map((i) => i.customer_id))).toEqual(new Set(['B']));
    expect(drill.total).toBe('120');
    expect(customerList(starter, { currency: 'USD', touches: new Map() }).map((c) => c.customer_id)).toEqual([
      'B',
    ]);
  });

  it('lists the metadata keys present and refuses bad dimensions and filters without quoting them', async () => {
    expect(await readRevenueMetadataKeys(warehouse, PROJECT)).toEqual(['coupon', 'interval', 'plan', 'team']);
    expect(() =>
      revenueBreakdown([], {
        from: '2026-01',
        to: '2026-01',
        currency: 'USD',
        by: 'secret_x',
        values: new Map(),
      }),
    ).toThrow(RevenueQueryError);
    for (const bad of ['secret_x==1', 'plan', 'metadata.==x', 'plan=>1']) {
      let message = '';
      try {
        parseRevenueFilters(bad);
      } catch (error) {
        expect(error instanceof FilterSyntaxError || error instanceof RevenueQueryError).toBe(true);
        message = (error as Error).message;
      }
      expect(message, bad).not.toBe('');
      expect(message).not.toContain('secret_x');
    }
  });
});
