// The tracker core against a fake platform: a manual clock and timers, scripted responses, recorded sends.
import { describe, expect, it } from 'vitest';
import {
  createTracker,
  ingestUrl,
  SESSION_TIMEOUT_MS,
  type SendResult,
  type TrackerPlatform,
} from './tracker.ts';

type Scripted = SendResult | 'network' | 'pending';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function fakePlatform(script: Scripted[] = []) {
  let now = Date.parse('2026-03-01T12:00:00Z');
  let ids = 0;
  const timers: Array<{ at: number; callback: () => void }> = [];
  const posts: Array<{ url: string; token: string; body: Record<string, unknown>; at: number }> = [];
  const beacons: Array<{ url: string; body: Record<string, unknown> }> = [];
  const state = { beaconAccepts: true };
  const platform: TrackerPlatform = {
    async post(url, token, body) {
      posts.push({ url, token, body: JSON.parse(body), at: now });
      const next = script.shift() ?? { status: 202, retryAfter: null };
      if (next === 'network') throw new TypeError('Failed to fetch');
      if (next === 'pending') return new Promise<SendResult>(() => {});
      return next;
    },
    beacon(url, body) {
      if (state.beaconAccepts) beacons.push({ url, body: JSON.parse(body) });
      return state.beaconAccepts;
    },
    now: () => now,
    setTimer: (callback, ms) => void timers.push({ at: now + ms, callback }),
    random: () => 0.5,
    uuid: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
    page: () => ({
      url: 'https://shop.example/pricing?utm_source=newsletter&utm_campaign=spring',
      path: '/pricing',
      referrer: 'https://www.google.com/',
      title: 'Pricing',
      locale: 'en-US',
      screen_width: 1440,
    }),
  };
  /** Lets every pending promise chain run (the fake post resolves asynchronously). */
  const idle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  /** Moves the clock forward, firing due timers in order. */
  async function advance(ms: number) {
    const until = now + ms;
    for (;;) {
      await idle();
      timers.sort((a, b) => a.at - b.at);
      const due = timers[0];
      if (!due || due.at > until) break;
      timers.shift();
      now = due.at;
      due.callback();
      await idle();
    }
    now = until;
    await idle();
  }
  return { platform, posts, beacons, timers, state, idle, advance, now: () => now };
}

const config = { token: 'pub_test', endpoint: 'https://tally.example.com/', retryBackoff: 1000 };

describe('records', () => {
  it('sends a pageview with the page, UTM parameters, session and timestamp, token in the envelope', async () => {
    const fake = fakePlatform();
    const tracker = createTracker(config, fake.platform);
    tracker.pageview();
    await fake.idle();
    expect(fake.posts).toHaveLength(1);
    const [post] = fake.posts;
    expect(post?.url).toBe('https://tally.example.com/api/ingest');
    expect(post?.token).toBe('pub_test');
    expect(post?.body).toEqual({
      type: 'pageview',
      token: 'pub_test', // in the body: the browser sends a simple text/plain request, without preflight
      id: '00000000-0000-4000-8000-000000000002',
      data: {
        session_id: '00000000-0000-4000-8000-000000000001',
        url: 'https://shop.example/pricing?utm_source=newsletter&utm_campaign=spring',
        path: '/pricing',
        referrer: 'https://www.google.com/',
        title: 'Pricing',
        locale: 'en-US',
        screen_width: 1440,
        utm_source: 'newsletter',
        utm_campaign: 'spring',
        timestamp: fake.now(),
      },
    });
    expect(post?.body.data).not.toHaveProperty('visitor_fingerprint'); // derived by the server
  });

  it('lets pageview options override the page', async () => {
    const fake = fakePlatform();
    createTracker(config, fake.platform).pageview({ path: '/#/settings', referrer: null, title: 'Settings' });
    await fake.idle();
    expect(fake.posts[0]?.body.data).toMatchObject({
      path: '/#/settings',
      referrer: null,
      title: 'Settings',
    });
  });

  it('sends custom events and identify in the same session', async () => {
    const fake = fakePlatform();
    const tracker = createTracker(config, fake.platform);
    tracker.event('signup_clicked', { plan: 'pro' });
    tracker.identify('cus_42');
    await fake.idle();
    const [event, identify] = fake.posts.map((p) => p.body);
    expect(event).toMatchObject({
      type: 'event',
      data: {
        event_name: 'signup_clicked',
        event_data: { plan: 'pro' },
        url: 'https://shop.example/pricing?utm_source=newsletter&utm_campaign=spring',
        path: '/pricing',
      },
    });
    expect(identify).toMatchObject({ type: 'identify', data: { customer_id: 'cus_42' } });
    expect((identify?.data as { session_id: string }).session_id).toBe(
      (event?.data as { session_id: string }).session_id,
    );
  });

  it('builds the ingest URL from a base URL or takes a full one', () => {
    expect(ingestUrl('https://t.example')).toBe('https://t.example/api/ingest');
    expect(ingestUrl('https://t.example/')).toBe('https://t.example/api/ingest');
    expect(ingestUrl('https://t.example/tally/api/ingest')).toBe('https://t.example/tally/api/ingest');
  });
});

describe('session', () => {
  it('keeps one session while active and rolls over after 30 minutes without activity', async () => {
    const fake = fakePlatform();
    const tracker = createTracker(config, fake.platform);
    const first = tracker.getSessionId();
    expect(first).toMatch(UUID);
    tracker.event('a');
    await fake.advance(SESSION_TIMEOUT_MS - 1000);
    tracker.event('b'); // activity just before the timeout keeps the session and extends it
    await fake.advance(SESSION_TIMEOUT_MS - 1000);
    expect(tracker.getSessionId()).toBe(first);
    await fake.advance(2000);
    const second = tracker.getSessionId();
    expect(second).not.toBe(first);
    tracker.event('c');
    await fake.idle();
    expect(fake.posts.map((p) => (p.body.data as { session_id: string }).session_id)).toEqual([
      first,
      first,
      second,
    ]);
  });

  it('starts a new session on reset', () => {
    const fake = fakePlatform();
    const tracker = createTracker(config, fake.platform);
    const first = tracker.getSessionId();
    tracker.reset();
    expect(tracker.getSessionId()).not.toBe(first);
  });

  it('keeps the session in an injected store (memory by default)', () => {
    const fake = fakePlatform();
    let stored: { id: string; lastActive: number } | undefined = { id: 'kept', lastActive: fake.now() };
    const tracker = createTracker(config, {
      ...fake.platform,
      session: {
        get: () => stored,
        set: (session) => {
          stored = session;
        },
      },
    });
    expect(tracker.getSessionId()).toBe('kept');
  });
});

describe('queue', () => {
  it('retries network errors and 5xx with growing, jittered backoff and the same record id', async () => {
    const fake = fakePlatform([
      'network',
      { status: 503, retryAfter: null },
      { status: 500, retryAfter: null },
    ]);
    const tracker = createTracker(config, fake.platform);
    const start = fake.now();
    tracker.event('checkout');
    await fake.advance(60_000);
    expect(fake.posts.map((p) => p.at - start)).toEqual([0, 750, 750 + 1500, 750 + 1500 + 3000]);
    expect(new Set(fake.posts.map((p) => p.body.id)).size).toBe(1);
    expect(tracker.pending()).toBe(0);
  });

  it('waits for Retry-After after a 429 and holds every record until then, in order', async () => {
    const fake = fakePlatform([
      { status: 202, retryAfter: null },
      { status: 429, retryAfter: '3600' },
    ]);
    const tracker = createTracker(config, fake.platform);
    const start = fake.now();
    tracker.pageview();
    tracker.event('first');
    await fake.idle();
    tracker.event('second');
    await fake.advance(3_600_000 - 1);
    expect(fake.posts).toHaveLength(2); // nothing more during the hour, not even the second event
    expect(tracker.pending()).toBe(2);
    await fake.advance(1);
    expect(
      fake.posts.map((p) => [p.at - start, (p.body.data as { event_name?: string }).event_name]),
    ).toEqual([
      [0, undefined],
      [0, 'first'],
      [3_600_000, 'first'],
      [3_600_000, 'second'],
    ]);
    expect(fake.posts[2]?.body.id).toBe(fake.posts[1]?.body.id);
    expect(tracker.pending()).toBe(0);
  });

  it('falls back to backoff when a 429 has no usable Retry-After', async () => {
    const fake = fakePlatform([{ status: 429, retryAfter: null }]);
    createTracker(config, fake.platform).event('x');
    await fake.advance(10_000);
    expect(fake.posts.map((p) => p.at - (fake.posts[0]?.at ?? 0))).toEqual([0, 750]);
  });

  it.each([
    400, 401, 403, 404, 413, 415,
  ])('never retries a %i and goes on with the next record', async (status) => {
    const fake = fakePlatform([{ status, retryAfter: '1' }]);
    const tracker = createTracker(config, fake.platform);
    tracker.event('refused');
    tracker.event('next');
    await fake.advance(3_600_000);
    expect(fake.posts.map((p) => (p.body.data as { event_name: string }).event_name)).toEqual([
      'refused',
      'next',
    ]);
    expect(fake.timers).toHaveLength(0);
    expect(tracker.pending()).toBe(0);
  });

  it('drops a record after maxRetries retries', async () => {
    const fake = fakePlatform(Array.from({ length: 10 }, () => 'network' as const));
    const tracker = createTracker({ ...config, maxRetries: 2 }, fake.platform);
    tracker.event('doomed');
    await fake.advance(3_600_000);
    expect(fake.posts).toHaveLength(3);
    expect(tracker.pending()).toBe(0);
  });

  it('sends one record at a time, in order', async () => {
    const fake = fakePlatform(['pending']);
    const tracker = createTracker(config, fake.platform);
    tracker.event('a');
    tracker.event('b');
    await fake.idle();
    expect(fake.posts).toHaveLength(1);
    expect(tracker.pending()).toBe(2);
  });
});

describe('flush', () => {
  it('beacons the queued records with the token in the body, leaving the one in flight alone', async () => {
    const fake = fakePlatform(['pending']);
    const tracker = createTracker(config, fake.platform);
    tracker.event('in-flight');
    tracker.event('queued-1');
    tracker.event('queued-2');
    await fake.idle();
    tracker.flush();
    expect(fake.beacons.map((b) => b.url)).toEqual([
      'https://tally.example.com/api/ingest',
      'https://tally.example.com/api/ingest',
    ]);
    expect(
      fake.beacons.map((b) => [b.body.token, (b.body.data as { event_name: string }).event_name]),
    ).toEqual([
      ['pub_test', 'queued-1'],
      ['pub_test', 'queued-2'],
    ]);
    expect(fake.beacons[0]?.body.id).toMatch(UUID);
    expect(tracker.pending()).toBe(1);
  });

  it('beacons a record waiting for its backoff, with the id of its first attempt', async () => {
    const fake = fakePlatform([{ status: 503, retryAfter: null }]);
    const tracker = createTracker(config, fake.platform);
    tracker.event('retrying');
    await fake.idle();
    tracker.flush();
    expect(fake.beacons).toHaveLength(1);
    expect(fake.beacons[0]?.body.id).toBe(fake.posts[0]?.body.id);
    expect(tracker.pending()).toBe(0);
  });

  it('posts with keepalive when the beacon is refused', async () => {
    const fake = fakePlatform([{ status: 503, retryAfter: null }]);
    const tracker = createTracker(config, fake.platform);
    tracker.event('retrying');
    await fake.idle();
    fake.state.beaconAccepts = false;
    tracker.flush();
    await fake.idle();
    expect(fake.posts).toHaveLength(2);
    expect(fake.posts[1]?.body.id).toBe(fake.posts[0]?.body.id);
  });

  it('does not send while a Retry-After is in force', async () => {
    const fake = fakePlatform([{ status: 429, retryAfter: '60' }]);
    const tracker = createTracker(config, fake.platform);
    tracker.event('limited');
    await fake.idle();
    tracker.flush();
    expect(fake.beacons).toHaveLength(0);
  });
});

describe('blocked', () => {
  it('queues nothing while the platform says so, and sends again once it no longer does', async () => {
    const fake = fakePlatform();
    let blocked = true;
    const tracker = createTracker(config, { ...fake.platform, blocked: () => blocked });
    tracker.pageview();
    tracker.event('clicked');
    tracker.identify('cus_1');
    await fake.idle();
    expect(fake.posts).toHaveLength(0);
    expect(tracker.pending()).toBe(0);
    tracker.flush();
    expect(fake.beacons).toHaveLength(0);
    blocked = false; // e.g. optIn()
    tracker.event('after');
    await fake.idle();
    expect(fake.posts.map((p) => (p.body.data as { event_name?: string }).event_name)).toEqual(['after']);
  });
});

describe('never throws into the page', () => {
  it('survives a platform whose calls throw', async () => {
    const fake = fakePlatform();
    const broken: TrackerPlatform = {
      ...fake.platform,
      page: () => {
        throw new Error('no page');
      },
      post: () => {
        throw new Error('no network');
      },
    };
    const tracker = createTracker({ ...config, maxRetries: 1 }, broken);
    expect(() => tracker.pageview()).not.toThrow();
    expect(() => tracker.event('x')).not.toThrow();
    expect(() => tracker.identify('c')).not.toThrow();
    await fake.advance(10_000);
    expect(tracker.pending()).toBe(0); // identify was tried, retried once and dropped
  });
});
