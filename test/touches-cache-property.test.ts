// The attribution panels' cached touches (readCustomerTouchesCached, @tally/reports revenue/touches-cache.ts)
// against the uncached query, on random data through real chDB and the real landers: visits, identifies (a
// visitor identified again as another customer among them) and revenue (a transaction sent again, as another
// copy with another customer and visitor: the one received first is kept) land in several deliveries,
// some delivered twice (the analytics lander then writes the same visits again with a new version), some
// followed by merges of the tables (which drop replaced rows from the raw tables the probe reads).
// Before each delivery the touches are read from the cache, so that the next read refreshes only the
// changed buckets; after it, the cached touches must equal readCustomerTouches' exactly. A second test
// proves that a pageview of an anonymous visitor re-reads nothing, and that one identify re-reads its
// customers only.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyticsLander } from '@tally/analytics-consumer';
import type { LogMessage } from '@tally/log';
import { anIngestRecord, aPolledMessage } from '@tally/log/testing';
import { readCustomerTouches, readCustomerTouchesCached } from '@tally/reports/revenue';
import { revenueLander } from '@tally/revenue-consumer';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'tally-touches-cache-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
}, 60_000);
afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const START = Date.parse('2026-01-01T00:00:00Z');
const SPAN = Date.parse('2026-05-01T00:00:00Z') - START;
const HOUR = 3_600_000;

type Kind = 'pageview' | 'identify' | 'revenue';
const message = (project: string, type: Kind, timestamp: number, data: Record<string, unknown>): LogMessage =>
  aPolledMessage(
    anIngestRecord(type, {
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

const pageview = (project: string, visitor: number, at: number, source: number) => {
  const s = SOURCES[source] as Record<string, string>;
  const query = s.utm_source
    ? `?utm_source=${s.utm_source}&utm_medium=${s.utm_medium}&utm_campaign=${s.utm_campaign}`
    : '';
  return message(project, 'pageview', at, {
    visitor_fingerprint: `v${visitor}`,
    session_id: `s${visitor}`,
    url: `https://shop.example/pricing${query}`,
    path: '/pricing',
    ...s,
  });
};
const identify = (project: string, visitor: number, customer: number, at: number) =>
  message(project, 'identify', at, {
    visitor_fingerprint: `v${visitor}`,
    session_id: `s${visitor}`,
    customer_id: `c${customer}`,
  });
const revenue = (project: string, tx: number, customer: number, visitor: number, at: number) =>
  message(project, 'revenue', at, {
    visitor_fingerprint: `v${visitor}`,
    session_id: `s${visitor}`,
    customer_id: `c${customer}`,
    amount: 10,
    currency: 'USD',
    transaction_id: `tx_${tx}`,
    event_type: 'purchase',
  });

async function land(messages: readonly LogMessage[]) {
  const analytics = analyticsLander(warehouse);
  const lander = revenueLander(warehouse);
  const a = messages.filter((m) => m.record?.type !== 'revenue');
  const r = messages.filter((m) => m.record?.type === 'revenue');
  if (a.length) await analytics.land(a.map((m) => ({ message: m, row: analytics.prepare(m) })));
  if (r.length) await lander.land(r.map((m) => ({ message: m, row: lander.prepare(m) })));
}

// Visitors 0–7 (some never identified: anonymous), customers 0–3, transactions 0–5 (a transaction drawn
// twice is a second record of it, with its own customer and visitor: the first stored wins). Times on a
// coarse grid (hours) so that equal visit starts and a visit starting at the first revenue time occur.
const item = fc.oneof(
  fc.record({
    kind: fc.constant('pageview' as const),
    visitor: fc.nat(7),
    at: fc.nat(SPAN / HOUR - 1),
    source: fc.nat(SOURCES.length - 1),
  }),
  fc.record({
    kind: fc.constant('identify' as const),
    visitor: fc.nat(7),
    customer: fc.nat(3),
    at: fc.nat(SPAN / HOUR - 1),
  }),
  fc.record({
    kind: fc.constant('revenue' as const),
    tx: fc.nat(5),
    customer: fc.nat(3),
    visitor: fc.nat(9), // 8 and 9 never have visits
    at: fc.nat(SPAN / HOUR - 1),
  }),
  // Another stored copy of a transaction, written straight to the table (the revenue lander stores a
  // transaction once; copies come from redelivery races): the copy received first is the one kept.
  fc.record({
    kind: fc.constant('copy' as const),
    tx: fc.nat(5),
    customer: fc.nat(3),
    visitor: fc.nat(9),
    at: fc.nat(SPAN / HOUR - 1),
    received: fc.nat(SPAN / HOUR - 1),
  }),
);
type Item = typeof item extends fc.Arbitrary<infer T> ? T : never;

const sql = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
const copyRow = (project: string, c: Extract<Item, { kind: 'copy' }>) => ({
  project_id: project,
  transaction_id: `tx_${c.tx}`,
  id: randomUUID(),
  customer_id: `c${c.customer}`,
  visitor_id: `v${c.visitor}`,
  session_id: `s${c.visitor}`,
  event_type: 'purchase',
  amount: '10',
  currency: 'USD',
  mrr_impact: null,
  is_recurring: null,
  customer_subscription_id: '',
  payment_processor: 'stripe',
  timestamp: sql(START + c.at * HOUR),
  received_at: sql(START + c.received * HOUR),
  timestamp_clamped: false,
  metadata: {},
  payload: '{}',
  user_agent: '',
});

const messageOf = (project: string, i: Exclude<Item, { kind: 'copy' }>): LogMessage =>
  i.kind === 'pageview'
    ? pageview(project, i.visitor, START + i.at * HOUR, i.source)
    : i.kind === 'identify'
      ? identify(project, i.visitor, i.customer, START + i.at * HOUR)
      : revenue(project, i.tx, i.customer, i.visitor, START + i.at * HOUR);

const deliveries = fc.array(
  fc.record({
    items: fc.array(item, { minLength: 1, maxLength: 8 }),
    twice: fc.boolean(),
    merge: fc.boolean(),
  }),
  { minLength: 2, maxLength: 4 },
);

describe('the cached touches', () => {
  it('equal the uncached query after every delivery of visits, identifies and revenue', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(deliveries, async (ds) => {
        run += 1;
        const project = `touches-${run}`;
        for (const d of ds) {
          await readCustomerTouchesCached(warehouse, project);
          const batch = d.items.flatMap((i) => (i.kind === 'copy' ? [] : [messageOf(project, i)]));
          const copies = d.items.flatMap((i) => (i.kind === 'copy' ? [copyRow(project, i)] : []));
          await land(batch);
          if (copies.length > 0) await warehouse.insert('revenue', copies);
          if (d.twice) await land(batch);
          // Merges drop replaced rows: a revenue record that lost to an earlier-received copy of its
          // transaction leaves the raw table, and with it the last trace of its customer there.
          if (d.merge) {
            for (const table of ['revenue', 'identities', 'visits']) {
              await warehouse.command(`OPTIMIZE TABLE ${table} FINAL`);
            }
          }
          const [cached, uncached] = await Promise.all([
            readCustomerTouchesCached(warehouse, project),
            readCustomerTouches(warehouse, project),
          ]);
          expect(new Map(cached)).toEqual(uncached);
        }
      }),
      {
        numRuns: 40,
        examples: [
          // c0's only link is its transaction; an earlier-received record of it for c1 wins, and the merge
          // removes c0's row from the raw table: c0 has no touches any more.
          [
            [
              {
                items: [
                  { kind: 'pageview', visitor: 0, at: 0, source: 1 },
                  { kind: 'revenue', tx: 0, customer: 0, visitor: 0, at: 5 },
                ],
                twice: false,
                merge: false,
              },
              {
                items: [{ kind: 'copy', tx: 0, customer: 1, visitor: 1, at: 1, received: 1 }],
                twice: false,
                merge: true,
              },
            ],
          ],
        ],
      },
    );
  }, 600_000);

  it('re-read nothing for an anonymous pageview, and only the customers of one new identify', async () => {
    const project = 'touches-reads';
    await land([
      pageview(project, 1, START, 1),
      identify(project, 1, 1, START + HOUR),
      pageview(project, 2, START + 2 * HOUR, 2),
      identify(project, 2, 2, START + 3 * HOUR),
      revenue(project, 1, 1, 1, START + 5 * HOUR),
    ]);
    // A warehouse that records the SQL of each query it is asked.
    const asked: string[] = [];
    const counting: Warehouse = Object.create(warehouse, {
      query: {
        value: (sql: string, params?: object) => {
          asked.push(sql);
          return warehouse.query(sql, params as never);
        },
      },
    });
    const first = await readCustomerTouchesCached(counting, project);
    expect([...first.keys()].sort()).toEqual(['c1', 'c2']);
    const probes = asked.length;
    asked.length = 0;
    await readCustomerTouchesCached(counting, project);
    expect(asked.length).toBe(2); // the probe's two queries, nothing read
    expect(probes).toBeGreaterThan(2);

    asked.length = 0;
    await land([pageview(project, 7, START + HOUR / 2, 3)]); // visitor 7: never identified
    expect(await readCustomerTouchesCached(counting, project)).toBe(first);
    expect(asked.length).toBe(2);

    // Visitor 7 identified as c2 (an earlier visit than c2's own): c2's touches are read again, alone.
    asked.length = 0;
    await land([identify(project, 7, 2, START + 6 * HOUR)]);
    const after = await readCustomerTouchesCached(counting, project);
    expect(new Map(after)).toEqual(await readCustomerTouches(warehouse, project));
    expect(after.get('c2')?.first.visitor_id).toBe('v7');
    expect(after.get('c1')).toBe(first.get('c1'));
    const reread = asked.filter((sql) => sql.includes('argMin('));
    expect(reread).toHaveLength(1);
    expect(reread[0]).toContain('{customers:Array(String)}');
  });
});
