// The reports' conformance suite, which every warehouse backend runs beside the warehouse's own
// (@tally/warehouse/conformance): from rows stored through the warehouse interface, the revenue and traffic
// reports and the tables the consumers keep (mrr_movements, mrr_monthly) come out the same on each. Each
// backend's test calls describeReportsConformance with a factory that opens a warehouse on a database of
// the test's own.
import { randomUUID } from 'node:crypto';
import { formatMicros, MAX_MONEY, moneyText, toMicros } from '@tally/contract';
import { EVENT_DAY as DAY, eventRow, freshWarehouses, type OpenWarehouse } from '@tally/warehouse/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadExchangeRates, parseExchangeRatesCsv, readExchangeRates } from './revenue/exchange-rates.ts';
import { readMrrInputs } from './revenue/history.ts';
import { mrrMovements } from './revenue/ledger.ts';
import { monthlyRevenue, mrrReport } from './revenue/monthly.ts';
import { searchRevenue } from './revenue/search.ts';
import { backfillMrrMovements, refreshCustomersMrr, refreshMrrMovements } from './tables/mrr-table.ts';
import { MRR_MONTHLY_COLUMNS, mrrMonthlyRows, WORKED_EXAMPLE_MONTHS, workedExample } from './testing.ts';
import { trafficReport } from './traffic/report.ts';

function revenueRow(data: ReturnType<typeof workedExample>[number], project: string, receivedAt: number) {
  return {
    project_id: project,
    transaction_id: data.transaction_id,
    id: randomUUID(),
    timestamp: data.timestamp,
    received_at: receivedAt,
    client_timestamp: data.timestamp,
    timestamp_clamped: false,
    customer_id: data.customer_id,
    visitor_id: data.visitor_fingerprint,
    session_id: data.session_id,
    event_type: data.event_type ?? '',
    amount: moneyText(data.amount),
    currency: data.currency ?? 'USD',
    mrr_impact: typeof data.mrr_impact === 'number' ? moneyText(data.mrr_impact) : null,
    is_recurring: data.is_recurring ?? null,
    customer_subscription_id: data.customer_subscription_id ?? '',
    payment_processor: 'stripe',
    metadata: Object.fromEntries(Object.entries(data.metadata ?? {}).map(([k, v]) => [k, String(v)])),
    payload: JSON.stringify(data),
    user_agent: '',
  };
}

/** mrr_monthly's money columns as exact decimal text, as the report gives them. */
const MONEY_COLUMNS = [
  'mrr_start',
  'new',
  'expansion',
  'reactivation',
  'contraction',
  'churn',
  'mrr_end',
  'net_new',
]
  .map((c) => `toString(${c}) AS ${c}`)
  .join(', ');

export function describeReportsConformance(name: string, open: OpenWarehouse): void {
  describe(`reports conformance: ${name}`, () => {
    /** A warehouse on a database of this test's own, migrated. */
    const fresh = freshWarehouses(open);

    it('keeps the first record of a transaction and searches metadata by key and value', async () => {
      const w = await fresh();
      const [first, second] = workedExample('conf');
      if (!first || !second) throw new Error('worked example missing');
      await w.insert('revenue', [revenueRow(first, 'rev', 1000)]);
      await w.insert('revenue', [
        revenueRow({ ...first, amount: 999 }, 'rev', 2000),
        revenueRow(second, 'rev', 3000),
      ]);
      const stored = await w.query(
        "SELECT transaction_id, amount FROM revenue_records WHERE project_id = 'rev'",
      );
      expect(stored).toEqual(
        expect.arrayContaining([
          { transaction_id: first.transaction_id, amount: 100 },
          { transaction_id: second.transaction_id, amount: 50 },
        ]),
      );
      expect(stored).toHaveLength(2);
      const found = await searchRevenue(w, { project: 'rev', metadata: { plan: 'pro' } });
      expect(found.map((r) => [r.transaction_id, r.data.amount])).toEqual([[first.transaction_id, 100]]);
      expect(await searchRevenue(w, { project: 'rev', metadata: { plan: 'pro', interval: 'x' } })).toEqual(
        [],
      );
    });

    it("reports the worked example's monthly table from stored records in any arrival order", async () => {
      const w = await fresh();
      const example = workedExample('conf-mrr');
      await w.insert(
        'revenue',
        [...example].reverse().map((data, i) => revenueRow(data, 'mrr', DAY + i)),
      );
      const report = await mrrReport(w, { project: 'mrr', from: '2026-01', to: '2026-04' });
      expect(
        report.map(
          ({ data_warnings: _w, customers_start: _s, customers_end: _e, churned_customers: _c, ...m }) => m,
        ),
      ).toEqual(WORKED_EXAMPLE_MONTHS);
      const [cash] = await w.query(
        "SELECT sum(cash_revenue) AS cash FROM revenue_cash_monthly WHERE project_id = 'mrr'",
      );
      expect(cash).toEqual({ cash: 150 + 1280 + 150 + 540 });
    });

    it('keeps mrr_movements and mrr_monthly as the worked example says, re-classifying on a late record', async () => {
      const w = await fresh();
      const example = workedExample('conf-mov');
      const [first, ...rest] = example;
      if (!first) throw new Error('worked example missing');
      const customersOf = (records: typeof example) => [...new Set(records.map((r) => r.customer_id))];
      // Everything but A's first subscription: A's upgrade looks like new business for now.
      await w.insert(
        'revenue',
        rest.map((data, i) => revenueRow(data, 'mov', DAY + i)),
      );
      await refreshMrrMovements(w, 'mov', customersOf(rest));
      const movementsOf = () =>
        w.query(
          `SELECT transaction_id, customer_id, movement, amount, mrr_before, mrr_after
           FROM mrr_movements_current WHERE project_id = 'mov' ORDER BY timestamp`,
        );
      expect((await movementsOf()).find((m) => m.customer_id === 'A')).toMatchObject({
        transaction_id: 'conf-mov_tx_3',
        movement: 'new',
        amount: 50,
      });

      // The late record arrives: A's movements are recomputed, the others stay.
      await w.insert('revenue', [revenueRow(first, 'mov', DAY + 100)]);
      await refreshMrrMovements(w, 'mov', ['A']);
      await refreshMrrMovements(w, 'mov', ['A']); // idempotent
      const tx = (n: number) => `conf-mov_tx_${n}`;
      expect(await movementsOf()).toEqual([
        {
          transaction_id: tx(1),
          customer_id: 'A',
          movement: 'new',
          amount: 100,
          mrr_before: 0,
          mrr_after: 100,
        },
        {
          transaction_id: tx(2),
          customer_id: 'B',
          movement: 'new',
          amount: 50,
          mrr_before: 0,
          mrr_after: 50,
        },
        {
          transaction_id: tx(3),
          customer_id: 'A',
          movement: 'expansion',
          amount: 50,
          mrr_before: 100,
          mrr_after: 150,
        },
        {
          transaction_id: tx(4),
          customer_id: 'B',
          movement: 'contraction',
          amount: 20,
          mrr_before: 50,
          mrr_after: 30,
        },
        {
          transaction_id: tx(5),
          customer_id: 'C',
          movement: 'new',
          amount: 100,
          mrr_before: 0,
          mrr_after: 100,
        },
        {
          transaction_id: tx(7),
          customer_id: 'B',
          movement: 'churn',
          amount: 30,
          mrr_before: 30,
          mrr_after: 0,
        },
        {
          transaction_id: tx(8),
          customer_id: 'B',
          movement: 'reactivation',
          amount: 40,
          mrr_before: 0,
          mrr_after: 40,
        },
      ]);

      const monthly = await w.query(
        `SELECT ${MRR_MONTHLY_COLUMNS} FROM mrr_monthly WHERE project_id = 'mov' ORDER BY month`,
      );
      expect(monthly).toEqual(mrrMonthlyRows(WORKED_EXAMPLE_MONTHS));
    });

    it('keeps mrr_movements and mrr_monthly equal to the fold over every record, whatever the arrival order', async () => {
      const w = await fresh();
      const record = fc.record({
        customer_id: fc.constantFrom('a', 'b', 'c'),
        customer_subscription_id: fc.constantFrom(undefined, 's1', 's2'),
        event_type: fc.constantFrom(
          'subscription' as const,
          'upgrade' as const,
          'downgrade' as const,
          'churn' as const,
          'renewal' as const,
          'purchase' as const,
          'refund' as const,
        ),
        // Small amounts, and values at the contract's bounds (sums past what a double holds exactly).
        amount: fc.oneof(
          fc.integer({ min: 1, max: 500 }),
          fc.constantFrom(MAX_MONEY, 999_999_999.999999, 0.000001),
        ),
        mrr_impact: fc.option(
          fc.oneof(
            fc.integer({ min: -150, max: 200 }),
            fc.constantFrom(MAX_MONEY, -MAX_MONEY, 999_999_999.999999, -0.000001),
          ),
          { nil: undefined },
        ),
        is_recurring: fc.option(fc.boolean(), { nil: undefined }),
        annual: fc.boolean(),
        currency: fc.constantFrom('USD', 'EUR'),
        day: fc.integer({ min: 0, max: 150 }),
        late: fc.boolean(),
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 25 }), async (generated) => {
          const project = `prop${run++}`;
          const records = generated.map((g, i) => ({
            data: {
              visitor_fingerprint: 'fp',
              session_id: 's',
              customer_id: g.customer_id,
              amount: g.event_type === 'refund' ? -g.amount : g.amount,
              currency: g.currency,
              transaction_id: `${project}_${i}`,
              event_type: g.event_type,
              timestamp: Date.UTC(2026, 0, 1) + g.day * 86_400_000,
              ...(g.customer_subscription_id && { customer_subscription_id: g.customer_subscription_id }),
              ...(g.mrr_impact !== undefined && { mrr_impact: g.mrr_impact }),
              ...(g.is_recurring !== undefined && { is_recurring: g.is_recurring }),
              ...(g.annual && { metadata: { interval: 'annual' } }),
            } as ReturnType<typeof workedExample>[number],
            late: g.late,
          }));
          // Two deliveries, each followed by the consumer's refresh of its customers.
          for (const late of [false, true]) {
            const batch = records.filter((r) => r.late === late).map((r) => r.data);
            if (batch.length === 0) continue;
            await w.insert(
              'revenue',
              batch.map((data, i) => revenueRow(data, project, DAY + (late ? 1000 : 0) + i)),
            );
            await refreshMrrMovements(w, project, [...new Set(batch.map((r) => r.customer_id))]);
          }

          const inputs = await readMrrInputs(w, { project });
          const expected = mrrMovements(inputs).movements.map((m) => ({
            transaction_id: m.transaction_id,
            movement: m.kind,
            amount: formatMicros(m.amount),
            mrr_before: formatMicros(m.prev),
            mrr_after: formatMicros(m.next),
          }));
          const stored = await w.query(
            `SELECT transaction_id, movement, toString(amount) AS amount, toString(mrr_before) AS mrr_before,
                    toString(mrr_after) AS mrr_after FROM mrr_movements_current
             WHERE project_id = {project:String} ORDER BY timestamp, transaction_id`,
            { project },
          );
          const byTx = (a: Record<string, unknown>, b: Record<string, unknown>) =>
            String(a.transaction_id).localeCompare(String(b.transaction_id));
          expect([...stored].sort(byTx)).toEqual([...expected].sort(byTx));

          const report = monthlyRevenue(inputs, '2026-01', '2026-06');
          const monthly = await w.query<Record<string, number | string | null>>(
            `SELECT substring(toString(month), 1, 7) AS month, currency, ${MONEY_COLUMNS},
                    gross_revenue_churn_rate, net_revenue_churn_rate, arpa
             FROM mrr_monthly WHERE project_id = {project:String} ORDER BY currency, month`,
            { project },
          );
          for (const row of monthly) {
            const want = report.find((r) => r.month === row.month && r.currency === row.currency);
            expect(want, `${row.month} ${row.currency}`).toBeDefined();
            if (!want) continue;
            for (const key of [
              'mrr_start',
              'new',
              'expansion',
              'reactivation',
              'contraction',
              'churn',
              'mrr_end',
              'net_new',
            ] as const) {
              expect(row[key], `${row.month} ${row.currency} ${key}`).toBe(want[key]);
            }
            // The bridge closes exactly in the view too.
            const micros = (key: string) => toMicros(String(row[key]));
            expect(
              micros('new') +
                micros('expansion') +
                micros('reactivation') -
                micros('contraction') -
                micros('churn'),
            ).toBe(micros('mrr_end') - micros('mrr_start'));
            // Ratios are doubles on both sides, divided in a different order: equal to 12 significant digits.
            for (const key of ['gross_revenue_churn_rate', 'net_revenue_churn_rate', 'arpa'] as const) {
              if (want[key] === null) expect(row[key], key).toBeNull();
              else {
                const expected = Number(want[key]);
                const difference = Math.abs((row[key] as number) - expected);
                expect(difference, `${row.month} ${row.currency} ${key}`).toBeLessThanOrEqual(
                  Math.max(1e-6, Math.abs(expected) * 1e-12),
                );
              }
            }
          }
          // Every month with a movement has its row.
          const months = new Set(
            mrrMovements(inputs).movements.map(
              (m) => `${new Date(m.timestamp).toISOString().slice(0, 7)} ${m.currency}`,
            ),
          );
          expect(new Set(monthly.map((r) => `${r.month} ${r.currency}`))).toEqual(months);
        }),
        { numRuns: 15 },
      );
      // Fifteen warehouses' worth of queries: seconds on an idle machine, more on a busy one.
    }, 60_000);

    it('recomputes the customers of several projects in one go, each from its own project only', async () => {
      const w = await fresh();
      // Two projects with the same customer ids (A to D) and different histories.
      const example = workedExample('conf-two');
      const [first, ...rest] = example;
      if (!first) throw new Error('worked example missing');
      await w.insert('revenue', [
        ...example.map((data, i) => revenueRow(data, 'two-x', DAY + i)),
        ...rest.map((data, i) => revenueRow(data, 'two-y', DAY + i)),
      ]);
      await refreshMrrMovements(w, 'two-y', ['B']);
      const movementsOf = (project: string, customer: string) =>
        w.query(
          `SELECT transaction_id, movement, toString(amount) AS amount FROM mrr_movements_current
           WHERE project_id = {project:String} AND customer_id = {customer:String} ORDER BY timestamp, transaction_id`,
          { project, customer },
        );
      /** What the fold of the project's whole history says of the customer. */
      const expected = async (project: string, customer: string) =>
        mrrMovements(await readMrrInputs(w, { project }))
          .movements.filter((m) => m.customer_id === customer)
          .map((m) => ({
            transaction_id: m.transaction_id,
            movement: m.kind,
            amount: formatMicros(m.amount),
          }));
      const yBefore = await movementsOf('two-y', 'B');
      expect(yBefore.length).toBeGreaterThan(0);

      // A late record of B in two-y, which two-y's B is not recomputed for: it stays as it was.
      const late = { ...first, customer_id: 'B', transaction_id: 'conf-two_late' };
      await w.insert('revenue', [revenueRow(late, 'two-y', DAY + 50)]);
      const total = await refreshCustomersMrr(w, [
        { project: 'two-x', customer: 'A' },
        { project: 'two-x', customer: 'B' },
        { project: 'two-y', customer: 'A' },
      ]);
      for (const [project, customer] of [
        ['two-x', 'A'],
        ['two-x', 'B'],
        ['two-y', 'A'],
      ] as const) {
        expect(await movementsOf(project, customer)).toEqual(await expected(project, customer));
      }
      // two-x's A has its first subscription, two-y's A does not: each was folded from its own records.
      expect(await movementsOf('two-x', 'A')).not.toEqual(await movementsOf('two-y', 'A'));
      expect(await expected('two-y', 'B')).not.toEqual(yBefore);
      expect(await movementsOf('two-y', 'B')).toEqual(yBefore);
      expect(await movementsOf('two-x', 'C')).toEqual([]);
      expect(total).toBe(
        (await expected('two-x', 'A')).length +
          (await expected('two-x', 'B')).length +
          (await expected('two-y', 'A')).length,
      );
    });

    it("recomputes a customer from the first copy of each transaction, not a later copy's customer", async () => {
      const w = await fresh();
      const [first] = workedExample('conf-copy');
      if (!first) throw new Error('worked example missing');
      // The first copy of the transaction names customer A; a later copy (same transaction id) names B.
      await w.insert('revenue', [
        revenueRow({ ...first, customer_id: 'A' }, 'copy', DAY),
        revenueRow({ ...first, customer_id: 'B' }, 'copy', DAY + 1),
      ]);
      await refreshCustomersMrr(w, [
        { project: 'copy', customer: 'A' },
        { project: 'copy', customer: 'B' },
      ]);
      expect(
        await w.query(
          "SELECT customer_id, transaction_id FROM mrr_movements_current WHERE project_id = 'copy' ORDER BY customer_id",
        ),
      ).toEqual([{ customer_id: 'A', transaction_id: first.transaction_id }]);
    });

    it('removes a movement that a late record makes disappear', async () => {
      const w = await fresh();
      const [base] = workedExample('conf-gone');
      if (!base) throw new Error('worked example missing');
      const at = (day: number) => Date.UTC(2026, 0, day, 12);
      const subscribe = { ...base, customer_id: 'E', transaction_id: 'gone_1', timestamp: at(1) };
      // A churn without mrr_impact takes the subscription's whole MRR away: churn 100, for now.
      const churn = {
        ...base,
        customer_id: 'E',
        transaction_id: 'gone_3',
        event_type: 'churn' as const,
        amount: 0,
        mrr_impact: undefined,
        timestamp: at(20),
      };
      await w.insert('revenue', [revenueRow(subscribe, 'gone', DAY), revenueRow(churn, 'gone', DAY + 1)]);
      await refreshMrrMovements(w, 'gone', ['E']);
      const movements = () =>
        w.query(
          "SELECT transaction_id, movement FROM mrr_movements_current WHERE project_id = 'gone' ORDER BY timestamp",
        );
      expect(await movements()).toEqual([
        { transaction_id: 'gone_1', movement: 'new' },
        { transaction_id: 'gone_3', movement: 'churn' },
      ]);
      // A downgrade to zero on day 10 arrives late: the churn on day 20 then changes nothing.
      const downgrade = {
        ...base,
        customer_id: 'E',
        transaction_id: 'gone_2',
        event_type: 'downgrade' as const,
        mrr_impact: -100,
        timestamp: at(10),
      };
      await w.insert('revenue', [revenueRow(downgrade, 'gone', DAY + 2)]);
      await refreshMrrMovements(w, 'gone', ['E']);
      expect(await movements()).toEqual([
        { transaction_id: 'gone_1', movement: 'new' },
        { transaction_id: 'gone_2', movement: 'churn' },
      ]);
    });

    it('fills mrr_movements from stored revenue when the table is empty', async () => {
      const w = await fresh();
      await w.insert(
        'revenue',
        workedExample('conf-fill').map((data, i) => revenueRow(data, 'fill', DAY + i)),
      );
      expect(await backfillMrrMovements(w)).toBe(4); // customers A, B, C, D
      expect(await backfillMrrMovements(w)).toBe(0); // not empty any more
      const [count] = await w.query(
        "SELECT count() AS n FROM mrr_movements_current WHERE project_id = 'fill'",
      );
      expect(count).toEqual({ n: 7 });
    });

    it('reports traffic: pageviews, visitors, sessions and events of a range, without bots', async () => {
      const w = await fresh();
      await w.insert('events', [
        eventRow({
          project_id: 'tr',
          path: '/a',
          visitor_id: 'v1',
          session_id: 's1',
          referrer_source: 'Google',
        }),
        eventRow({ project_id: 'tr', path: '/a', visitor_id: 'v2', session_id: 's2' }),
        eventRow({
          project_id: 'tr',
          path: '/b',
          visitor_id: 'v1',
          session_id: 's3',
          utm_campaign: 'spring',
        }),
        eventRow({
          project_id: 'tr',
          type: 'event',
          event_name: 'signup',
          visitor_id: 'v1',
          session_id: 's1',
        }),
        eventRow({ project_id: 'tr', path: '/a', visitor_id: 'bot', session_id: 'b', is_bot: true }),
        eventRow({ project_id: 'tr', path: '/late', timestamp: DAY + 86_400_000 * 5 }),
      ]);
      const report = await trafficReport(w, { project: 'tr', from: '2026-03-10', to: '2026-03-10' });
      expect(report).toMatchObject({ pageviews: 3, visitors: 2, sessions: 3, events: 1 });
      expect(report.paths).toEqual([
        { path: '/a', pageviews: 2, visitors: 2 },
        { path: '/b', pageviews: 1, visitors: 1 },
      ]);
      expect(report.event_names).toEqual([{ event_name: 'signup', events: 1, visitors: 1 }]);
      expect(report.days).toEqual([{ day: '2026-03-10', pageviews: 3, visitors: 2, sessions: 3, events: 1 }]);
    });

    it('stores exchange rates as loaded text, the latest load of a rate replacing the earlier', async () => {
      const w = await fresh();
      await loadExchangeRates(
        w,
        parseExchangeRatesCsv('month,currency,rate_to_EUR\n2026-01,USD,0.920000000001\n'),
      );
      await loadExchangeRates(w, parseExchangeRatesCsv('date,currency,rate_to_EUR\n2026-01-31,GBP,1.17\n'));
      await loadExchangeRates(w, parseExchangeRatesCsv('month,currency,rate_to_EUR\n2026-01,USD,0.93\n'));
      expect(await readExchangeRates(w)).toEqual([
        { base: 'EUR', currency: 'GBP', period: '2026-01-31', rate: '1.17' },
        { base: 'EUR', currency: 'USD', period: '2026-01', rate: '0.93' },
      ]);
      expect(await readExchangeRates(w, 'USD')).toEqual([]);
    });
  });
}
