// A property of the revenue views (issue 11), on real chDB through the real landers (analytics and
// revenue): random visits, identifies and revenue records, delivered out of order, in batches, partly
// twice (the same record id) and partly as another record of a transaction already stored, give
// - every attribution breakdown (channel, source, campaign; first and last touch) rows that add up
//   exactly to its total, and a total equal to the monthly MRR report's over the same months;
// - the same attribution as the records landed once each, in order, in another project;
// - per month, a reconciliation whose cash kinds add up to the month's cash, whose bridge closes, and whose
//   movements equal the mrr_movements table the revenue lander keeps;
// - drill-downs whose items add up to their figure, for the whole and for each attribution group;
// - breakdowns by a customer attribute (metadata.plan, plan, interval) whose rows add up to the MRR report,
//   the same as in the clean project, and each row equal to the whole filtered to its key.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyticsLander } from '@tally/analytics-consumer';
import { formatMicros, type IngestRecord, toMicros } from '@tally/contract';
import type { LogMessage } from '@tally/log';
import { anIngestRecord, aPolledMessage } from '@tally/log/testing';
import {
  ATTRIBUTION_DIMENSIONS,
  DRILLDOWN_FIGURES,
  filterRevenueRecords,
  mrrReport,
  parseRevenueFilters,
  readCustomerAttributes,
  readCustomerTouches,
  readMrrInputs,
  readStoredMovements,
  reconcile,
  revenueAttribution,
  revenueBreakdown,
  revenueDrilldown,
  TOUCHES,
} from '@tally/reports/revenue';
import { revenueLander } from '@tally/revenue-consumer';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'tally-attribution-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
});
afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const START = Date.parse('2026-01-01T00:00:00Z');
const SPAN = Date.parse('2026-05-01T00:00:00Z') - START;
const MONTHS = ['2026-01', '2026-02', '2026-03', '2026-04'];
const MONEY = [
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'mrr_end',
  'cash_revenue',
] as const;

type Kind = 'pageview' | 'identify' | 'revenue';
const message = (
  project: string,
  type: Kind,
  id: string,
  timestamp: number,
  data: Record<string, unknown>,
): LogMessage =>
  aPolledMessage(
    anIngestRecord(type, {
      id,
      project_id: project,
      received_at: timestamp,
      timestamp,
      client_timestamp: timestamp,
      user_agent: BROWSER,
      country: 'DE',
      data,
    }),
  );

const SOURCES = [
  {},
  { referrer: 'https://www.google.com/' },
  { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring' },
  { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'brand' },
];
const EVENT_TYPES = [
  'subscription',
  'upgrade',
  'downgrade',
  'churn',
  'renewal',
  'purchase',
  'refund',
] as const;

const world = fc.record({
  pageviews: fc.array(
    fc.record({ visitor: fc.nat(5), at: fc.nat(SPAN - 1), source: fc.nat(SOURCES.length - 1) }),
    { maxLength: 12 },
  ),
  identifies: fc.array(fc.record({ visitor: fc.nat(5), customer: fc.nat(3), at: fc.nat(SPAN - 1) }), {
    maxLength: 5,
  }),
  revenue: fc.array(
    fc.record({
      customer: fc.nat(3),
      visitor: fc.nat(7), // 6 and 7 never have visits
      at: fc.nat(SPAN - 1),
      type: fc.constantFrom(...EVENT_TYPES),
      cents: fc.integer({ min: 1, max: 100_000 }),
      impact: fc.option(fc.integer({ min: -50_000, max: 50_000 }), { nil: undefined }),
      subscription: fc.constantFrom('', 'sub_1', 'sub_2'),
      annual: fc.boolean(),
      plan: fc.option(fc.constantFrom('pro', 'basic', 'team'), { nil: undefined }),
    }),
    { maxLength: 14 },
  ),
  order: fc.array(fc.nat(), { maxLength: 40 }),
  twice: fc.array(fc.boolean(), { maxLength: 40 }),
  batch: fc.integer({ min: 1, max: 6 }),
});

type WorldValue = typeof world extends fc.Arbitrary<infer T> ? T : never;

function messagesOf(project: string, w: WorldValue) {
  const out: LogMessage[] = [];
  for (const p of w.pageviews) {
    const source = SOURCES[p.source] as Record<string, string>;
    const query = source.utm_source
      ? `?utm_source=${source.utm_source}&utm_medium=${source.utm_medium}&utm_campaign=${source.utm_campaign}`
      : '';
    out.push(
      message(project, 'pageview', randomUUID(), START + p.at, {
        visitor_fingerprint: `v${p.visitor}`,
        session_id: `s${p.visitor}`,
        url: `https://shop.example/pricing${query}`,
        path: '/pricing',
        ...source,
      }),
    );
  }
  for (const i of w.identifies) {
    out.push(
      message(project, 'identify', randomUUID(), START + i.at, {
        visitor_fingerprint: `v${i.visitor}`,
        session_id: `s${i.visitor}`,
        customer_id: `c${i.customer}`,
      }),
    );
  }
  w.revenue.forEach((r, n) => {
    const negative = r.type === 'refund' || r.type === 'churn';
    const data = {
      visitor_fingerprint: `v${r.visitor}`,
      session_id: `s${r.visitor}`,
      customer_id: `c${r.customer}`,
      amount: (negative ? -r.cents : r.cents) / 100,
      currency: 'USD',
      transaction_id: `tx_${n}`,
      event_type: r.type,
      ...(r.impact === undefined ? {} : { mrr_impact: r.impact / 100 }),
      ...(r.type === 'subscription' ? { is_recurring: true } : {}),
      ...(r.subscription ? { customer_subscription_id: r.subscription } : {}),
      ...(r.annual || r.plan
        ? { metadata: { ...(r.annual ? { interval: 'annual' } : {}), ...(r.plan ? { plan: r.plan } : {}) } }
        : {}),
    };
    out.push(message(project, 'revenue', randomUUID(), START + r.at, data));
  });
  return out;
}
async function land(messages: readonly LogMessage[]) {
  const analytics = analyticsLander(warehouse);
  const revenue = revenueLander(warehouse);
  const a = messages.filter((m) => m.record?.type !== 'revenue');
  const r = messages.filter((m) => m.record?.type === 'revenue');
  if (a.length) await analytics.land(a.map((m) => ({ message: m, row: analytics.prepare(m) })));
  if (r.length) await revenue.land(r.map((m) => ({ message: m, row: revenue.prepare(m) })));
}

const sum = (values: readonly string[]) => values.reduce((t, v) => t + toMicros(v), 0n);

describe('revenue views over random records delivered out of order and partly twice', () => {
  it('add up: breakdowns to totals, totals to the MRR report, bridges close, drill-downs to figures', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        run += 1;
        const messy = `prop-messy-${run}`;
        const clean = `prop-clean-${run}`;
        // The clean project: every record once, in time order, in one batch.
        const once = messagesOf(clean, w).sort(
          (a, b) => (a.record?.timestamp ?? 0) - (b.record?.timestamp ?? 0),
        );
        await land(once);
        // The messy one: shuffled by the drawn order, in batches, some batches delivered twice, and some
        // revenue records sent again as a new record of the same transaction (a different amount: the
        // first stored wins).
        const records = messagesOf(messy, w);
        const shuffled = records
          .map((m, i) => ({ m, key: w.order[i % Math.max(1, w.order.length)] ?? i }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.m);
        for (let i = 0; i < shuffled.length; i += w.batch) {
          const batch = shuffled.slice(i, i + w.batch);
          await land(batch);
          if (w.twice[i % Math.max(1, w.twice.length)]) await land(batch);
        }
        const again = records
          .filter((m) => m.record?.type === 'revenue')
          .slice(0, 2)
          .map((m) => {
            const record = m.record as IngestRecord & { data: { amount: number } };
            return { ...m, record: { ...record, id: randomUUID(), data: { ...record.data, amount: 999 } } };
          });
        await land(again as LogMessage[]);

        const [inputs, touches, cleanInputs, cleanTouches] = await Promise.all([
          readMrrInputs(warehouse, { project: messy, currency: 'USD' }),
          readCustomerTouches(warehouse, messy),
          readMrrInputs(warehouse, { project: clean, currency: 'USD' }),
          readCustomerTouches(warehouse, clean),
        ]);
        const report = await mrrReport(warehouse, {
          project: messy,
          from: '2026-01',
          to: '2026-04',
          currency: 'USD',
        });
        for (const by of ATTRIBUTION_DIMENSIONS) {
          for (const touch of TOUCHES) {
            const options = { from: '2026-01', to: '2026-04', currency: 'USD', by, touch };
            const attribution = revenueAttribution(inputs, { ...options, touches });
            for (const field of MONEY) {
              expect(sum(attribution.rows.map((r) => r[field])), `${by} ${touch} ${field}`).toBe(
                toMicros(attribution.total[field]),
              );
            }
            expect(attribution.rows.reduce((t, r) => t + r.customers, 0)).toBe(attribution.total.customers);
            expect(attribution.rows.reduce((t, r) => t + r.paying_customers, 0)).toBe(
              attribution.total.paying_customers,
            );
            for (const field of [
              'new',
              'expansion',
              'reactivation',
              'contraction',
              'churn',
              'cash_revenue',
            ] as const)
              expect(sum(report.map((m) => m[field])), field).toBe(toMicros(attribution.total[field]));
            expect(attribution.total.mrr_end).toBe(report.at(-1)?.mrr_end);
            expect(attribution).toEqual(
              revenueAttribution(cleanInputs, { ...options, touches: cleanTouches }),
            );
            // Each group's drill-downs add up to the group's figures.
            for (const row of attribution.rows) {
              for (const figure of ['new', 'churn', 'mrr_end', 'cash_revenue'] as const) {
                const drill = revenueDrilldown(inputs, {
                  ...options,
                  figure,
                  group: { by, touch, key: row.key, touches },
                });
                expect(drill.total, `${row.key} ${figure}`).toBe(row[figure]);
                expect(sum(drill.items.map((i) => i.amount))).toBe(toMicros(row[figure]));
              }
            }
          }
        }
        // Breakdowns by a customer attribute: rows add up to the report, each row is the whole filtered to it.
        const until = Date.parse('2026-05-01T00:00:00Z');
        for (const by of ['metadata.plan', 'plan', 'interval']) {
          const options = { from: '2026-01', to: '2026-04', currency: 'USD', by };
          const [values, cleanValues] = await Promise.all(
            [messy, clean].map(async (project) =>
              (await readCustomerAttributes(warehouse, { project, dimensions: [by], until })).get(by),
            ),
          );
          const breakdown = revenueBreakdown(inputs, { ...options, values: values ?? new Map() });
          for (const field of MONEY)
            expect(sum(breakdown.rows.map((r) => r[field])), `${by} ${field}`).toBe(
              toMicros(breakdown.total[field]),
            );
          expect(breakdown.rows.reduce((t, r) => t + r.customers, 0)).toBe(breakdown.total.customers);
          expect(breakdown.total.mrr_end).toBe(report.at(-1)?.mrr_end);
          expect(sum(report.map((m) => m.new))).toBe(toMicros(breakdown.total.new));
          expect(sum(report.map((m) => m.cash_revenue))).toBe(toMicros(breakdown.total.cash_revenue));
          expect(breakdown).toEqual(
            revenueBreakdown(cleanInputs, { ...options, values: cleanValues ?? new Map() }),
          );
          for (const row of breakdown.rows) {
            const kept = await filterRevenueRecords(warehouse, inputs, {
              project: messy,
              filters: parseRevenueFilters(`${by}==${row.key}`),
              until,
            });
            const only = revenueBreakdown(kept, { ...options, values: values ?? new Map() });
            expect(only.rows, `${by}==${row.key}`).toEqual([row]);
          }
        }
        for (const figure of DRILLDOWN_FIGURES) {
          const drill = revenueDrilldown(inputs, { figure, from: '2026-01', to: '2026-04', currency: 'USD' });
          if (figure === 'paying_customers') {
            expect(drill.count).toBe(report.at(-1)?.customers_end);
          } else {
            const want =
              figure === 'mrr_start'
                ? report[0]?.mrr_start
                : figure === 'mrr_end'
                  ? report.at(-1)?.mrr_end
                  : formatMicros(sum(report.map((m) => m[figure]))); // a movement or cash over the months
            expect(drill.total, figure).toBe(want);
            expect(sum(drill.items.map((i) => i.amount))).toBe(toMicros(drill.total));
          }
        }
        for (const month of MONTHS) {
          const stored = await readStoredMovements(warehouse, { project: messy, month, currency: 'USD' });
          const r = reconcile(inputs, { month, currency: 'USD', stored });
          expect(r.errors, month).toEqual([]);
          expect(r.bridge.closes).toBe(true);
          const monthly = report.find((m) => m.month === month);
          expect(r.cash.total).toBe(monthly?.cash_revenue);
          expect(
            sum([r.cash.recurring, r.cash.one_off, r.cash.refunds, r.cash.churn, r.cash.unlabelled]),
          ).toBe(toMicros(r.cash.total));
          expect(r.bridge.mrr_start).toBe(monthly?.mrr_start);
          expect(r.bridge.mrr_end).toBe(monthly?.mrr_end);
        }
      }),
      { numRuns: 12 },
    );
  }, 300_000);
});
