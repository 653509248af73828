// The per-IP rate limit with the in-memory store and with a real Redis shared by two gateways.
import { randomUUID } from 'node:crypto';
import { type TestGateway, testGateway } from '@tally/gateway/testing';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';

const LIMIT = 2000;
const body = JSON.stringify({ type: 'pageview', data: { session_id: 's' } });

function send(gw: TestGateway, remoteAddress: string, headers: Record<string, string> = {}) {
  // No token: each request is a cheap 401, and every request counts against the limit whatever its outcome.
  return gw.app.inject({
    method: 'POST',
    url: '/api/ingest',
    remoteAddress,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

async function sendMany(gw: TestGateway, remoteAddress: string, count: number) {
  for (let i = 0; i < count; i++) {
    const res = await send(gw, remoteAddress);
    if (res.statusCode === 429) throw new Error(`request ${i + 1} from ${remoteAddress} was rate limited`);
  }
}

function expectRateLimited(res: Awaited<ReturnType<typeof send>>) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toEqual({ error: 'Rate limited' });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  // A fixed one-hour window that started with this test's first request: close to an hour remains.
  expect(retryAfter).toBeGreaterThan(3500);
  expect(retryAfter).toBeLessThanOrEqual(3600);
  expect(res.headers['access-control-allow-origin']).toBe('*');
}

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.disconnect());

const stores = [
  ['in memory', async (env: Record<string, string> = {}) => testGateway(env)],
  [
    'in Redis',
    async (env: Record<string, string> = {}, prefix = `test:${randomUUID()}:`) =>
      testGateway({ REDIS_KEY_PREFIX: prefix, ...env }, { redis, redisPrefix: prefix }),
  ],
] as const;

describe.each(stores)('rate limit %s', (_name, make) => {
  const open: TestGateway[] = [];
  afterEach(async () => {
    for (const gw of open.splice(0)) await gw.close();
  });

  it('answers the 2,001st request in the hour from one IP with 429 and Retry-After', async () => {
    const gw = await make();
    open.push(gw);
    await sendMany(gw, '198.51.100.1', LIMIT);
    expectRateLimited(await send(gw, '198.51.100.1'));
    // Another client is not affected.
    expect((await send(gw, '198.51.100.2')).statusCode).toBe(401);
  });

  it('ignores X-Forwarded-For from an untrusted address, so a client cannot spoof past the limit', async () => {
    const gw = await make();
    open.push(gw);
    await sendMany(gw, '198.51.100.3', LIMIT);
    expectRateLimited(await send(gw, '198.51.100.3', { 'x-forwarded-for': '203.0.113.99' }));
  });

  it('honours X-Forwarded-For from a trusted proxy, taking the address the proxy saw', async () => {
    const gw = await make({ TRUST_PROXY: '10.0.0.0/8' });
    open.push(gw);
    for (let i = 0; i < LIMIT; i++) {
      // The client put a spoofed address first; the proxy appended the real one.
      const res = await send(gw, '10.1.2.3', { 'x-forwarded-for': `192.0.2.${i % 250}, 203.0.113.7` });
      expect(res.statusCode).toBe(401);
    }
    expectRateLimited(await send(gw, '10.1.2.3', { 'x-forwarded-for': '192.0.2.77, 203.0.113.7' }));
    expect((await send(gw, '10.1.2.3', { 'x-forwarded-for': '203.0.113.8' })).statusCode).toBe(401);
  });
});

describe('rate limit shared through Redis', () => {
  it('counts one client across two gateway replicas', async () => {
    const prefix = `test:${randomUUID()}:`;
    const a = await testGateway({ REDIS_KEY_PREFIX: prefix }, { redis, redisPrefix: prefix });
    const b = await testGateway({ REDIS_KEY_PREFIX: prefix }, { redis, redisPrefix: prefix });
    try {
      await sendMany(a, '198.51.100.9', LIMIT / 2);
      await sendMany(b, '198.51.100.9', LIMIT / 2);
      expectRateLimited(await send(a, '198.51.100.9'));
      expectRateLimited(await send(b, '198.51.100.9'));
      expect(await redis.keys(`${prefix}ratelimit:*`)).not.toHaveLength(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
