// GET …/traffic/realtime over real chDB (inject): visits folded by the analytics consumer's own refresh
// from records inside and outside the 30 minutes, the clock fixed (only Date is faked: chDB and the
// sockets run for real), and the exact figures: visitors now, pageviews per minute at the window's edge,
// the top pages, sources and countries, with a filter; access by share link; no-store; ETag and 304.
import { refreshVisits, type VisitRecord } from '@tally/reports/tables';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

const PROJECT = 'realtime';
const MINUTE = 60_000;
/** The fixed now: half past a minute. The window starts at the start of the minute 29 minutes before. */
const NOW = Math.floor(Date.now() / MINUTE) * MINUTE + 30_000;
const WINDOW_START = NOW - 30_000 - 29 * MINUTE;

let dashboard: TestDashboard;
let app: FastifyInstance;
let sequence = 0;

function record(
  visitor: string,
  timestamp: number,
  extra: Partial<VisitRecord> & { type?: VisitRecord['type'] } = {},
): VisitRecord {
  sequence += 1;
  return {
    id: `00000000-0000-7000-8000-${String(sequence).padStart(12, '0')}`,
    type: 'pageview',
    timestamp,
    visitor_id: visitor,
    path: '/',
    hostname: 'shop.example',
    referrer: '',
    referrer_source: '',
    referrer_medium: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    utm_term: '',
    utm_content: '',
    country: 'DE',
    region: '',
    city: '',
    browser: 'Firefox',
    os: 'Linux',
    device_type: 'desktop',
    screen_width: 1280,
    event_name: '',
    event_data: {},
    ...extra,
  };
}

const google = { referrer: 'https://www.google.com/', referrer_source: 'Google', referrer_medium: 'search' };

beforeAll(async () => {
  dashboard = await startTestDashboard('realtime', PROJECT);
  app = dashboard.app;
  await refreshVisits(
    dashboard.warehouse,
    new Map([
      [
        PROJECT,
        [
          // v1: two pageviews in the last 5 minutes, from Google.
          record('v1', NOW - 2 * MINUTE, { ...google }),
          record('v1', NOW - MINUTE, { path: '/pricing', ...google }),
          // v2: a newsletter visit from France, exactly at the window's first instant.
          record('v2', WINDOW_START, { utm_source: 'newsletter', utm_medium: 'email', country: 'FR' }),
          // v3: 1 ms before the window: in no figure.
          record('v3', WINDOW_START - 1, { path: '/old', country: 'US' }),
          // v4: a direct visit to /blog 25 minutes ago and a custom event 4 minutes ago (one visit).
          record('v4', NOW - 25 * MINUTE, { path: '/blog' }),
          record('v4', NOW - 4 * MINUTE, { type: 'event', event_name: 'signup', path: '/blog' }),
          // v6: /pricing from Google 10 minutes ago.
          record('v6', NOW - 10 * MINUTE, { path: '/pricing', ...google }),
        ],
      ],
      // Another project's visitor now: never counted here.
      ['elsewhere', [record('x1', NOW - MINUTE, { country: 'DE' })]],
    ]),
  );
  vi.useFakeTimers({ toFake: ['Date'], now: NOW });
}, 60_000);

afterAll(async () => {
  vi.useRealTimers();
  await dashboard?.close();
});

async function realtime(query = '', headers: Record<string, string> = {}) {
  return app.inject({
    url: `/api/v1/projects/${PROJECT}/traffic/realtime${query}`,
    headers: { authorization: `Bearer ${dashboard.key}`, ...headers },
  });
}

/** The expected 30 points: zeros but for the given minutes (offsets from the window's first minute). */
function minutes(pageviews: Record<number, number>) {
  return Array.from({ length: 30 }, (_, i) => ({
    minute: new Date(WINDOW_START + i * MINUTE).toISOString(),
    pageviews: pageviews[i] ?? 0,
  }));
}

describe('GET /traffic/realtime', () => {
  it('answers the last 30 minutes exactly: visitors now, pageviews per minute, top lists', async () => {
    const res = await realtime();
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      // v1 (pageviews 1 and 2 minutes ago) and v4 (an event 4 minutes ago); v6 is 10 minutes old.
      visitors: 2,
      // Minute 0 is the window's first (v2); NOW is minute 29 (+30 s).
      pageviews_per_minute: minutes({ 0: 1, 4: 1, 19: 1, 27: 1, 28: 1 }),
      pages: [
        { value: '/', visitors: 2 },
        { value: '/pricing', visitors: 2 },
        { value: '/blog', visitors: 1 },
      ],
      sources: [
        { value: 'Google', visitors: 2 },
        { value: 'Direct / None', visitors: 1 },
        { value: 'newsletter', visitors: 1 },
      ],
      countries: [
        { value: 'DE', visitors: 3 },
        { value: 'FR', visitors: 1 },
      ],
    });
  });

  it('applies the filters as every traffic read does (they keep visits)', async () => {
    const res = await realtime(`?filters=${encodeURIComponent('country==DE;source!=Google')}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      visitors: 1,
      pageviews_per_minute: minutes({ 4: 1 }),
      pages: [{ value: '/blog', visitors: 1 }],
      sources: [{ value: 'Direct / None', visitors: 1 }],
      countries: [{ value: 'DE', visitors: 1 }],
    });
  });

  it('answers a share link of the project, and no one else', async () => {
    const shared = await realtime('', { authorization: `Bearer ${dashboard.shareWithout}` });
    expect(shared.statusCode).toBe(200);
    expect(shared.json().visitors).toBe(2);
    const anonymous = await app.inject({ url: `/api/v1/projects/${PROJECT}/traffic/realtime` });
    expect(anonymous.statusCode).toBe(401);
    const other = await app.inject({
      url: '/api/v1/projects/elsewhere/traffic/realtime',
      headers: { authorization: `Bearer ${dashboard.key}` },
    });
    expect(other.statusCode).toBe(403);
  });

  it('answers 304 to the current ETag, and a new ETag once the figures change', async () => {
    const first = await realtime();
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const same = await realtime('', { 'if-none-match': etag });
    expect(same.statusCode).toBe(304);
    expect(same.body).toBe('');
    expect(same.headers.etag).toBe(etag);
    expect(same.headers['cache-control']).toBe('no-store');

    await refreshVisits(
      dashboard.warehouse,
      new Map([[PROJECT, [record('v7', NOW - 5_000, { path: '/new', country: 'FR' })]]]),
    );
    const changed = await realtime('', { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    const body = changed.json();
    expect(body.visitors).toBe(3);
    expect(body.pageviews_per_minute[29]).toEqual({
      minute: new Date(NOW - 30_000).toISOString(),
      pageviews: 1,
    });
    expect(body.countries).toEqual([
      { value: 'DE', visitors: 3 },
      { value: 'FR', visitors: 2 },
    ]);
  });
});
