// The visits table and the dashboard's figures, on real chDB through the analytics lander: docs/traffic.md's
// worked example gives exactly its figures, and (fast-check) random records delivered out of order, in
// several batches, partly twice, leave the visits table equal to the fold over every record once, so no
// figure changes with the order or the copies.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogMessage } from '@tally/log';
import { anIngestRecord, aPolledMessage } from '@tally/log/testing';
import {
  funnelSteps,
  goalConversions,
  parseFilters,
  type TrafficQuery,
  trafficBreakdown,
  trafficFigures,
  trafficFiguresOfPeriods,
  trafficTimeseries,
} from '@tally/reports/traffic';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsLander } from './consumer.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-visits-'));
let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
});
afterAll(async () => {
  await warehouse.close();
  rmSync(dir, { recursive: true, force: true });
});

const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';

function message(
  project: string,
  type: 'pageview' | 'event',
  timestamp: number,
  data: Record<string, unknown>,
): LogMessage {
  const record = anIngestRecord(type, {
    project_id: project,
    received_at: timestamp,
    timestamp,
    client_timestamp: timestamp,
    user_agent: BROWSER,
    data: { session_id: `s_${randomUUID()}`, ...data },
  });
  return aPolledMessage(record);
}

/** Lands a batch through a lander of its own (as a new process would), or through `lander` (one that ran before). */
async function land(batch: readonly LogMessage[], lander = analyticsLander(warehouse)): Promise<void> {
  await lander.land(batch.map((m) => ({ message: m, row: lander.prepare(m) })));
}

const query = (project: string, over: Partial<TrafficQuery> = {}): TrafficQuery => ({
  project,
  from: '2026-05-04',
  to: '2026-05-04',
  timeZone: 'UTC',
  filters: [],
  ...over,
});

describe("docs/traffic.md's worked example through the analytics lander", () => {
  const at = (time: string) => Date.parse(`2026-05-04T${time}:00Z`);
  const project = 'worked';
  beforeAll(async () => {
    const url = (path: string, query = '') => `https://shop.example${path}${query}`;
    const records = [
      message(project, 'pageview', at('10:00'), { visitor_fingerprint: 'v1', url: url('/'), path: '/' }),
      message(project, 'pageview', at('10:10'), {
        visitor_fingerprint: 'v1',
        url: url('/pricing'),
        path: '/pricing',
      }),
      message(project, 'pageview', at('11:00'), {
        visitor_fingerprint: 'v1',
        url: url('/signup'),
        path: '/signup',
      }),
      message(project, 'pageview', at('10:05'), {
        visitor_fingerprint: 'v2',
        url: url('/blog/a'),
        path: '/blog/a',
        referrer: 'https://www.google.com/',
      }),
      message(project, 'pageview', at('12:00'), {
        visitor_fingerprint: 'v3',
        url: url('/pricing', '?utm_source=newsletter&utm_medium=email'),
        path: '/pricing',
        utm_source: 'newsletter',
        utm_medium: 'email',
      }),
      message(project, 'event', at('12:02'), {
        visitor_fingerprint: 'v3',
        event_name: 'signup',
        path: '/pricing',
      }),
    ];
    // In reverse, in two batches, the second one twice.
    const reversed = records.reverse();
    await land(reversed.slice(0, 3));
    await land(reversed.slice(3));
    await land(reversed.slice(3));
  });

  it('gives 5 pageviews, 3 visitors, 4 visits, a bounce rate of 50%', async () => {
    expect(await trafficFigures(warehouse, query(project))).toMatchObject({
      pageviews: 5,
      visitors: 3,
      visits: 4,
      views_per_visit: 1.25,
      bounce_rate: 0.5,
      events: 1,
      visit_duration_s: (600 + 120) / 4,
      visit_duration_median_s: 60,
    });
  });

  it('gives each of several periods the figures it has alone, in one pass or several', async () => {
    const periods = [
      { from: '2026-05-04', to: '2026-05-04' },
      { from: '2026-05-03', to: '2026-05-03' },
      { from: '2025-05-04', to: '2025-05-04' },
    ];
    for (const set of [periods.slice(0, 2), periods]) {
      const together = await trafficFiguresOfPeriods(warehouse, query(project), set);
      const alone = await Promise.all(set.map((p) => trafficFigures(warehouse, query(project, p))));
      expect(together).toEqual(alone);
    }
  });

  it('lists the entry pages and the channels of the visits', async () => {
    const entries = await trafficBreakdown(warehouse, query(project), {
      dimension: 'entry_page',
      limit: 10,
      sort: 'value',
    });
    expect(entries.rows.map((r) => [r.value, r.visits])).toEqual([
      ['/', 1],
      ['/blog/a', 1],
      ['/pricing', 1],
      ['/signup', 1],
    ]);
    const channels = await trafficBreakdown(warehouse, query(project), { dimension: 'channel', limit: 10 });
    expect(channels.rows.map((r) => [r.value, r.visits, r.share])).toEqual([
      ['Direct', 2, 0.5],
      ['Email', 1, 0.25],
      ['Organic Search', 1, 0.25],
    ]);
    expect(channels.total).toBe(4);
  });

  it('applies a filter to every figure: the Email channel is v3 alone', async () => {
    const email = query(project, { filters: [{ dimension: 'channel', operator: '==', values: ['Email'] }] });
    expect(await trafficFigures(warehouse, email)).toMatchObject({
      pageviews: 1,
      visitors: 1,
      visits: 1,
      events: 1,
    });
    const pages = await trafficBreakdown(warehouse, email, { dimension: 'page', limit: 10 });
    expect(pages.rows).toEqual([{ value: '/pricing', pageviews: 1, visitors: 1, share: 1 }]);
    const blog = query(project, { filters: [{ dimension: 'page', operator: '==', values: ['/blog/*'] }] });
    expect(await trafficFigures(warehouse, blog)).toMatchObject({ pageviews: 1, visitors: 1, visits: 1 });
  });

  it('counts goals and funnels: visitors who reached them, in order for a funnel', async () => {
    const goals = await goalConversions(warehouse, query(project), [
      { event_name: 'signup' },
      { path: '/pricing' },
      { path: '/blog/*' },
      { path: '/nowhere' },
    ]);
    expect(goals).toEqual({
      visitors: 3,
      goals: [
        { visitors: 1, events: 1 },
        { visitors: 2, events: 2 },
        { visitors: 1, events: 1 },
        { visitors: 0, events: 0 },
      ],
    });
    expect(
      await funnelSteps(warehouse, query(project), [{ path: '/pricing' }, { event_name: 'signup' }]),
    ).toEqual([2, 1]);
    // v1 across its two visits: / at 10:00, /pricing at 10:10, /signup at 11:00.
    expect(
      await funnelSteps(warehouse, query(project), [
        { path: '/' },
        { path: '/pricing' },
        { path: '/signup' },
      ]),
    ).toEqual([1, 1, 1]);
    // Out of order does not count: /signup before /pricing for nobody.
    expect(await funnelSteps(warehouse, query(project), [{ path: '/signup' }, { path: '/pricing' }])).toEqual(
      [1, 0],
    );
  });

  it('matches a goal path without * literally: _ and % are characters, not patterns', async () => {
    // An exact path is compared with = (a wildcard one with LIKE): the same matches as the escaped pattern.
    const goals = await goalConversions(warehouse, query(project), [
      { path: '/pricin_' },
      { path: '/pric%' },
      { path: '/pric*' },
    ]);
    expect(goals.goals).toEqual([
      { visitors: 0, events: 0 },
      { visitors: 0, events: 0 },
      { visitors: 2, events: 2 },
    ]);
    expect(await funnelSteps(warehouse, query(project), [{ path: '/pricin_' }])).toEqual([0]);
    expect(await funnelSteps(warehouse, query(project), [{ path: '/pric*' }])).toEqual([2]);
  });

  it('matches filters exactly, by wildcard, by containing, and negated', async () => {
    const figures = (filters: string) =>
      trafficFigures(warehouse, query(project, { filters: parseFilters(filters) }));
    expect(await figures('page==/pricing')).toMatchObject({ visits: 2, visitors: 2, pageviews: 3 });
    expect(await figures('page==/blog/*|/signup')).toMatchObject({ visits: 2, visitors: 2 });
    expect(await figures('entry_page~=ric')).toMatchObject({ visits: 1, visitors: 1 });
    expect(await figures('channel!=Direct')).toMatchObject({ visits: 2, visitors: 2 });
    expect(await figures('event_name==signup;country==DE')).toMatchObject({ visits: 1, events: 1 });
    expect(await figures('country==FR')).toMatchObject({ visits: 0, visitors: 0, pageviews: 0 });
  });

  it('buckets by hour in the time zone', async () => {
    const points = await trafficTimeseries(warehouse, query(project), 'hour');
    expect(points).toHaveLength(24);
    expect(points.filter((p) => p.pageviews > 0).map((p) => [p.date, p.pageviews, p.visits])).toEqual([
      ['2026-05-04 10:00', 3, 2],
      ['2026-05-04 11:00', 1, 1],
      ['2026-05-04 12:00', 1, 1],
    ]);
    const berlin = await trafficTimeseries(warehouse, query(project, { timeZone: 'Europe/Berlin' }), 'day');
    expect(berlin).toEqual([expect.objectContaining({ date: '2026-05-04', pageviews: 5, visits: 4 })]);
  });
});

describe('time zones', () => {
  it('puts both 02:30 of the day clocks go back (Berlin) in the one 02:00 bucket, and the day in its day', async () => {
    const project = 'dst';
    await land([
      message(project, 'pageview', Date.parse('2026-10-25T00:30:00Z'), {
        visitor_fingerprint: 'a',
        path: '/',
      }),
      message(project, 'pageview', Date.parse('2026-10-25T01:30:00Z'), {
        visitor_fingerprint: 'b',
        path: '/',
      }),
      message(project, 'pageview', Date.parse('2026-10-24T22:30:00Z'), {
        visitor_fingerprint: 'c',
        path: '/',
      }),
    ]);
    const berlin = query(project, { from: '2026-10-25', to: '2026-10-25', timeZone: 'Europe/Berlin' });
    const hours = await trafficTimeseries(warehouse, berlin, 'hour');
    expect(hours).toHaveLength(24);
    expect(
      hours.filter((h) => h.pageviews > 0).map((h) => [h.date, h.pageviews, h.visitors, h.visits]),
    ).toEqual([
      ['2026-10-25 00:00', 1, 1, 1],
      ['2026-10-25 02:00', 2, 2, 2],
    ]);
    // 22:30 UTC on the 24th is 00:30 on the 25th in Berlin: in the day there, not in UTC's.
    expect(await trafficFigures(warehouse, berlin)).toMatchObject({ pageviews: 3, visits: 3 });
    expect(await trafficFigures(warehouse, { ...berlin, timeZone: 'UTC' })).toMatchObject({
      pageviews: 2,
      visits: 2,
    });
  });
});

describe('copies of stored records', () => {
  const at = (time: string) => Date.parse(`2026-05-04T${time}:00Z`);
  const visitsOf = (p: string) =>
    warehouse.query(
      `SELECT visitor_id, start, end, pageviews, entry_path, pageview_ids FROM visits FINAL
       WHERE project_id = {p:String} ORDER BY visitor_id, start`,
      { p },
    );

  it('repairs visits lost between storing records and refreshing visits when the batch comes again', async () => {
    const project = 'repair';
    const batch = [
      message(project, 'pageview', at('10:00'), {
        visitor_fingerprint: 'v',
        path: '/a',
        url: 'https://s.example/a',
      }),
      message(project, 'pageview', at('10:20'), {
        visitor_fingerprint: 'v',
        path: '/b',
        url: 'https://s.example/b',
      }),
    ];
    await land(batch);
    const before = await visitsOf(project);
    expect(before).toHaveLength(1);
    // As if the process had died after storing the records and before refreshing the visits.
    await warehouse.command(
      "ALTER TABLE visits DELETE WHERE project_id = 'repair' SETTINGS mutations_sync = 1",
    );
    expect(await visitsOf(project)).toEqual([]);
    await land(batch);
    expect(await visitsOf(project)).toEqual(before);
  });

  it('ignores a later copy of a stored record dated otherwise (another arrival), as events does', async () => {
    const project = 'later-copy';
    const first = message(project, 'pageview', at('10:00'), {
      visitor_fingerprint: 'v',
      path: '/a',
      url: 'https://s.example/a',
    });
    await land([first]);
    const before = await visitsOf(project);
    const copy = aPolledMessage(
      anIngestRecord('pageview', {
        ...first.record,
        timestamp: at('15:00'),
        received_at: at('15:00'),
        client_timestamp: at('15:00'),
      }),
    );
    await land([copy]);
    expect(await visitsOf(project)).toEqual(before);
  });
});

describe('redelivery and order (property)', () => {
  type Spec = { site: number; visitor: number; minute: number; type: 'pageview' | 'event'; path: number };
  const base = Date.parse('2026-05-04T00:00:00Z');

  // A lander per batch reads every visitor's stored visits; one lander for all keeps them in memory between
  // batches (VisitCache): both must give the visits of every record landed once.
  it.each([
    ['a lander per batch', false],
    ['one lander for every batch, its visits kept in memory', true],
  ])(
    'leaves the same visits whatever the batches, their order and the copies (%s)',
    async (_, shared) => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              // Two projects, their visitors of the same ids: a batch's projects are read together.
              site: fc.integer({ min: 0, max: 1 }),
              visitor: fc.integer({ min: 0, max: 2 }),
              minute: fc.integer({ min: 0, max: 4 * 60 }),
              type: fc.constantFrom('pageview' as const, 'event' as const),
              path: fc.integer({ min: 0, max: 3 }),
            }),
            { minLength: 1, maxLength: 30 },
          ),
          fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 30 }),
          fc.integer({ min: 1, max: 5 }),
          async (specs: Spec[], order: number[], batches: number) => {
            run++;
            const project = `prop${shared ? 's' : ''}${run}`;
            const sites = [`${project}a`, `${project}b`];
            const records = specs.map((s) =>
              message(sites[s.site] as string, s.type, base + s.minute * 60_000, {
                visitor_fingerprint: `v${s.visitor}`,
                path: `/p${s.path}`,
                url: `https://shop.example/p${s.path}`,
                ...(s.type === 'event' ? { event_name: `e${s.path}` } : {}),
              }),
            );
            // Some copies, then a shuffle by the generated keys, cut into batches.
            const delivered = [
              ...records,
              ...records.filter((_, i) => (order[i % order.length] ?? 0) % 3 === 0),
            ];
            const keyed = delivered.map((m, i) => ({ m, k: order[i % order.length] ?? i }));
            keyed.sort((a, b) => a.k - b.k);
            const size = Math.ceil(keyed.length / batches);
            const lander = shared ? analyticsLander(warehouse) : undefined;
            for (let i = 0; i < keyed.length; i += size) {
              await land(
                keyed.slice(i, i + size).map((x) => x.m),
                lander,
              );
            }

            // The reference: each project's records landed once, in order, in one batch, under another project.
            const visits = async (p: string) =>
              warehouse.query(
                `SELECT visitor_id, start, end, pageviews, events, is_bounce, entry_path, exit_path, pageview_paths, event_names
               FROM visits FINAL WHERE project_id = {p:String} ORDER BY visitor_id, start`,
                { p },
              );
            const range = { from: '2026-05-04', to: '2026-05-05' };
            let landedVisits = 0;
            for (const site of sites) {
              const reference = `${site}ref`;
              const own = records.filter((m) => m.record.project_id === site);
              await land(own.map((m) => aPolledMessage({ ...m.record, project_id: reference }, m)));
              const landed = await visits(site);
              landedVisits += landed.length;
              expect(landed).toEqual(await visits(reference));
              expect(await trafficFigures(warehouse, query(site, range))).toEqual(
                await trafficFigures(warehouse, query(reference, range)),
              );
            }
            expect(landedVisits).toBeGreaterThan(0);
          },
        ),
        { numRuns: 20 },
      );
    },
    120_000,
  );
});
