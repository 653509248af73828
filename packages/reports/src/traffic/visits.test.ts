// The visit, bounce and channel rules against hand-computed examples: docs/traffic.md's worked example, the
// 30-minute gap at its edge, and GA4's channel grouping case by case.
import { describe, expect, it } from 'vitest';
import { channelOf, sourceOf, type VisitOrigin } from './channels.ts';
import { screenSizeOf } from './dimensions.ts';
import { recordsOfVisit, type VisitRecord, visitsOf } from './visits.ts';

const at = (time: string) => Date.parse(`2026-05-04T${time}:00Z`);
let ids = 0;
function record(over: Partial<VisitRecord> & Pick<VisitRecord, 'visitor_id' | 'timestamp'>): VisitRecord {
  ids++;
  return {
    id: `00000000-0000-4000-8000-${String(ids).padStart(12, '0')}`,
    type: 'pageview',
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
    country: '',
    region: '',
    city: '',
    browser: 'Safari',
    os: 'macOS',
    device_type: 'desktop',
    screen_width: 0,
    event_name: '',
    event_data: {},
    ...over,
  };
}

describe("docs/traffic.md's worked example", () => {
  const records = [
    record({ visitor_id: 'v1', timestamp: at('10:00'), path: '/' }),
    record({ visitor_id: 'v1', timestamp: at('10:10'), path: '/pricing' }),
    record({ visitor_id: 'v1', timestamp: at('11:00'), path: '/signup' }),
    record({
      visitor_id: 'v2',
      timestamp: at('10:05'),
      path: '/blog/a',
      referrer: 'https://www.google.com/',
      referrer_source: 'Google',
      referrer_medium: 'search',
    }),
    record({
      visitor_id: 'v3',
      timestamp: at('12:00'),
      path: '/pricing',
      utm_source: 'newsletter',
      utm_medium: 'email',
    }),
    record({
      visitor_id: 'v3',
      timestamp: at('12:02'),
      type: 'event',
      event_name: 'signup',
      path: '/pricing',
    }),
  ];
  const visits = visitsOf(records);

  it('has 4 visits: v1 at 11:00 is 50 minutes after its previous view, a new visit', () => {
    expect(visits.map((v) => [v.visitor_id, v.entry_path, v.pageviews, v.events])).toEqual([
      ['v1', '/', 2, 0],
      ['v1', '/signup', 1, 0],
      ['v2', '/blog/a', 1, 0],
      ['v3', '/pricing', 1, 1],
    ]);
  });

  it('bounces 2 of 4 (50%): v1 at 11:00 and v2; an event is no bounce', () => {
    expect(visits.map((v) => v.is_bounce)).toEqual([false, true, true, false]);
  });

  it('gives the channels Direct 2, Organic Search 1, Email 1 and the sources of the entry pageviews', () => {
    expect(visits.map((v) => v.channel)).toEqual(['Direct', 'Direct', 'Organic Search', 'Email']);
    expect(visits.map((v) => v.source)).toEqual(['Direct / None', 'Direct / None', 'Google', 'newsletter']);
    expect(visits[2]?.referrer).toBe('www.google.com');
  });

  it('measures durations from first to last record (0 for a bounce), exits on the last pageview', () => {
    expect(visits.map((v) => v.duration_ms / 60_000)).toEqual([10, 0, 0, 2]);
    expect(visits.map((v) => v.exit_path)).toEqual(['/pricing', '/signup', '/blog/a', '/pricing']);
  });

  it('folds a stored visit back to itself, and with new records as if from every raw record', () => {
    for (const visit of visits) expect(visitsOf(recordsOfVisit(visit))).toEqual([visit]);
    // v1's 10:00 and 10:10 stored as visits of their own, then 10:05 arrives late: one visit, entry /.
    const [early, late, eleven] = records as [VisitRecord, VisitRecord, VisitRecord];
    const stored = [...visitsOf([early]), ...visitsOf([late])];
    const between = record({ visitor_id: 'v1', timestamp: at('10:05'), path: '/features' });
    const joined = visitsOf([...stored.flatMap(recordsOfVisit), between, late]);
    expect(joined).toEqual(visitsOf([early, late, between]));
    expect(joined).toHaveLength(1);
    // An earlier pageview with other attributes becomes the entry; the stored entry's attributes go.
    const before = record({
      visitor_id: 'v1',
      timestamp: at('09:45'),
      path: '/ad',
      utm_source: 'google',
      utm_medium: 'cpc',
    });
    expect(visitsOf([...visitsOf([early, late]).flatMap(recordsOfVisit), before])).toEqual(
      visitsOf([before, early, late]),
    );
    expect(visitsOf([...visitsOf([early]).flatMap(recordsOfVisit), before])[0]?.channel).toBe('Paid Search');
    expect(visitsOf([eleven, ...visitsOf([eleven]).flatMap(recordsOfVisit)])).toEqual(visitsOf([eleven]));
  });

  it('is the same whatever the order of the records and however many copies of each', () => {
    const shuffled = [...records, ...records.slice(0, 3)].reverse();
    expect(visitsOf(shuffled)).toEqual(visits);
  });
});

describe('the 30-minute gap', () => {
  it('starts a new visit at exactly 30 minutes, not at 29:59.999', () => {
    const t = at('10:00');
    const gap = (ms: number) =>
      visitsOf([record({ visitor_id: 'v', timestamp: t }), record({ visitor_id: 'v', timestamp: t + ms })])
        .length;
    expect(gap(30 * 60_000 - 1)).toBe(1);
    expect(gap(30 * 60_000)).toBe(2);
  });

  it('chains records 29 minutes apart into one long visit', () => {
    const records = Array.from({ length: 10 }, (_, i) =>
      record({ visitor_id: 'v', timestamp: at('10:00') + i * 29 * 60_000 }),
    );
    const [visit, ...rest] = visitsOf(records);
    expect(rest).toEqual([]);
    expect(visit?.duration_ms).toBe(9 * 29 * 60_000);
  });

  it('takes the entry attributes from the first pageview even when an event comes first', () => {
    const [visit] = visitsOf([
      record({ visitor_id: 'v', timestamp: at('10:00'), type: 'event', event_name: 'x', path: '/a' }),
      record({
        visitor_id: 'v',
        timestamp: at('10:01'),
        path: '/b',
        utm_source: 'google',
        utm_medium: 'cpc',
        country: 'DE',
        region: 'Bavaria',
        city: 'Munich',
        screen_width: 390,
      }),
    ]);
    expect(visit).toMatchObject({
      entry_path: '/b',
      channel: 'Paid Search',
      country: 'DE',
      region: 'Bavaria',
      city: 'Munich',
      screen_size: 'Mobile',
      is_bounce: false,
    });
  });
});

describe("GA4's default channel grouping", () => {
  const origin = (over: Partial<VisitOrigin>): VisitOrigin => ({
    referrer_source: '',
    referrer_medium: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    ...over,
  });
  it.each([
    [{}, 'Direct'],
    [{ referrer_source: 'Google', referrer_medium: 'search' }, 'Organic Search'],
    [{ referrer_source: 'Twitter', referrer_medium: 'social' }, 'Organic Social'],
    [{ referrer_source: 'Gmail', referrer_medium: 'email' }, 'Email'],
    [{ referrer_source: 'example.org' }, 'Referral'],
    [{ utm_source: 'google', utm_medium: 'cpc' }, 'Paid Search'],
    [{ utm_source: 'bing', utm_medium: 'organic' }, 'Organic Search'],
    [{ utm_source: 'facebook', utm_medium: 'paid_social' }, 'Paid Social'],
    [{ utm_source: 'linkedin', utm_medium: 'social' }, 'Organic Social'],
    [{ utm_source: 'youtube', utm_medium: 'cpv' }, 'Paid Video'],
    [{ utm_source: 'youtube' }, 'Organic Video'],
    [{ utm_source: 'newsletter', utm_medium: 'email' }, 'Email'],
    [{ utm_source: 'partner', utm_medium: 'affiliate' }, 'Affiliates'],
    [{ utm_source: 'ads', utm_medium: 'display' }, 'Display'],
    [{ utm_source: 'ads', utm_medium: 'cpm' }, 'Display'],
    [{ utm_source: 'somewhere', utm_medium: 'ppc' }, 'Other'],
    [{ utm_source: 'x', utm_medium: 'cpc', utm_campaign: 'cross-network q2' }, 'Other'],
    [{ utm_source: 'blog', utm_medium: 'referral' }, 'Referral'],
    [{ utm_campaign: 'spring' }, 'Other'],
  ] as const)('%j is %s', (over, channel) => {
    expect(channelOf(origin(over))).toBe(channel);
  });

  it('takes utm_source before the referrer as the source, Direct / None without either', () => {
    expect(sourceOf(origin({ referrer_source: 'Google', utm_source: 'newsletter' }))).toBe('newsletter');
    expect(sourceOf(origin({ referrer_source: 'Google' }))).toBe('Google');
    expect(sourceOf(origin({}))).toBe('Direct / None');
    // A known source is one source whatever its spelling: ?utm_source=google and a google.com referrer alike.
    for (const utm of ['google', 'Google', 'GOOGLE', 'google.com', ' google ']) {
      expect(sourceOf(origin({ utm_source: utm }))).toBe('Google');
    }
    expect(sourceOf(origin({ utm_source: 'fb' }))).toBe('Facebook');
    expect(sourceOf(origin({ utm_source: 'x' }))).toBe('Twitter');
    expect(sourceOf(origin({ referrer_source: 'hackernews' }))).toBe('Hacker News');
    expect(sourceOf(origin({ utm_source: 'Newsletter' }))).toBe('Newsletter');
  });
});

it('classes screen widths as Plausible does', () => {
  expect([0, 375, 575, 576, 991, 992, 1439, 1440, 2560].map(screenSizeOf)).toEqual([
    '',
    'Mobile',
    'Mobile',
    'Tablet',
    'Tablet',
    'Laptop',
    'Laptop',
    'Desktop',
    'Desktop',
  ]);
});
