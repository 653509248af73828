// What the analytics consumer derives from a record: browser, OS, device and bot flag from the
// User-Agent, the referrer's source when the client left it out, and the row it lands.
import { anIngestRecord } from '@tally/log/testing';
import { sourceOf } from '@tally/reports/traffic';
import { describe, expect, it } from 'vitest';
import { describeUserAgent, referrerOf } from './enrichment.ts';
import { eventRow, identityRow } from './rows.ts';

const NO_ORIGIN = {
  referrer_source: '',
  referrer_medium: '',
  utm_source: '',
  utm_medium: '',
  utm_campaign: '',
};

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('describeUserAgent', () => {
  it('names browser, OS and device type', () => {
    expect(describeUserAgent(IPHONE)).toEqual({
      browser: 'Safari',
      browser_version: '17.4',
      os: 'iOS',
      os_version: '17.4',
      device_type: 'mobile',
      is_bot: false,
    });
    expect(describeUserAgent(CHROME_WINDOWS)).toMatchObject({
      browser: 'Chrome',
      os: 'Windows',
      device_type: 'desktop',
    });
  });

  it('flags crawlers and leaves a missing User-Agent unknown', () => {
    expect(
      describeUserAgent('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)').is_bot,
    ).toBe(true);
    expect(describeUserAgent(null)).toMatchObject({ browser: '', is_bot: false });
  });
});

describe('referrerOf', () => {
  it('derives the source from the referrer host when the client sent none', () => {
    expect(referrerOf('https://www.google.com/search?q=tally', 'https://shop.example/', null)).toEqual({
      referrer_source: 'Google',
      referrer_medium: 'search',
    });
    expect(referrerOf('https://blog.example.org/post', 'https://shop.example/', '')).toMatchObject({
      referrer_source: 'blog.example.org',
    });
  });

  it('names a known source as a utm_source spelling it is named: one Google, not google and Google', () => {
    const page = 'https://shop.example/';
    for (const [host, utm] of [
      ['https://www.google.com/', 'google'],
      ['https://www.bing.com/', 'bing'],
      ['https://search.yahoo.com/', 'yahoo'],
      ['https://duckduckgo.com/', 'duckduckgo'],
      ['https://www.facebook.com/', 'facebook'],
      ['https://t.co/abc', 'twitter'],
      ['https://www.linkedin.com/', 'linkedin'],
      ['https://www.reddit.com/', 'reddit'],
      ['https://news.ycombinator.com/', 'hackernews'],
      ['https://youtube.com/', 'youtube'],
      ['https://github.com/', 'github'],
    ] as const) {
      const referred = referrerOf(host, page, null).referrer_source;
      const tagged = sourceOf({ ...NO_ORIGIN, utm_source: utm });
      expect(tagged, `${utm} and ${host}`).toBe(referred);
    }
  });

  it("keeps the client's source, and gives none for direct visits and internal navigation", () => {
    expect(referrerOf('https://www.google.com/', 'https://shop.example/', 'newsletter').referrer_source).toBe(
      'newsletter',
    );
    expect(referrerOf(null, 'https://shop.example/', null).referrer_source).toBe('');
    expect(
      referrerOf('https://shop.example/pricing', 'https://shop.example/signup', null).referrer_source,
    ).toBe('');
  });
});

const base = {
  id: '01900000-0000-7000-8000-000000000001',
  project_id: 'p',
  received_at: 1_767_571_200_000,
  timestamp: 1_767_571_200_000,
  client_timestamp: null,
  timestamp_clamped: false,
  user_agent: CHROME_WINDOWS,
  visitor_fingerprint_derived: true,
};

describe('rows', () => {
  it('lands a pageview with every field, enrichment, and unlisted fields as JSON', () => {
    const record = anIngestRecord('pageview', {
      ...base,
      data: {
        visitor_fingerprint: 'v1',
        session_id: 's1',
        url: 'https://shop.example/pricing?x=1',
        referrer: 'https://t.co/abc',
        utm_source: 'newsletter',
        utm_term: 'crm',
        custom_dimension: 42,
      },
    });
    expect(eventRow(record)).toMatchObject({
      type: 'pageview',
      visitor_id: 'v1',
      visitor_id_derived: true,
      hostname: 'shop.example',
      path: '/pricing',
      referrer_source: 'Twitter',
      referrer_medium: 'social',
      utm_source: 'newsletter',
      utm_term: 'crm',
      browser: 'Chrome',
      event_name: '',
      extra: '{"custom_dimension":42}',
    });
  });

  it('keeps event_data as a string map and identify as visitor, session and customer', () => {
    const event = anIngestRecord('event', {
      ...base,
      data: { session_id: 's1', event_name: 'signup', event_data: { plan: 'pro', seats: 3, trial: true } },
    });
    expect(eventRow(event)).toMatchObject({
      event_name: 'signup',
      event_data: { plan: 'pro', seats: '3', trial: 'true' },
    });
    const identify = anIngestRecord('identify', {
      ...base,
      data: { visitor_fingerprint: 'v1', session_id: 's1', customer_id: 'cus_42' },
    });
    expect(identityRow(identify)).toMatchObject({
      visitor_id: 'v1',
      session_id: 's1',
      customer_id: 'cus_42',
    });
  });
});
