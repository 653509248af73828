// The dashboard's state store on a real Redis (what docker-compose's dashboard and every replica share):
// the same conformance suite as LMDB, users, sessions and share links stored hashed, and the gateway's
// refusal counts summed exactly over flushes (a flush written twice counts once).
import { randomUUID } from 'node:crypto';
import { RedisStateStore, RefusalCounts, Sessions, ShareLinks, Users } from '@tally/state-store';
import { stateStoreConformance } from '@tally/state-store/conformance';
import { Redis } from 'ioredis';
import { afterAll, expect, inject, it } from 'vitest';

const prefix = `tally-test-${randomUUID()}:`;
const clients: Redis[] = [];
const open = () => {
  const redis = new Redis(inject('redisUrl'));
  clients.push(redis);
  return new RedisStateStore(redis, prefix);
};
afterAll(async () => {
  const redis = new Redis(inject('redisUrl'));
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  for (const c of clients) c.disconnect();
});

stateStoreConformance('Redis', open, '');

it('keeps users, sessions and share links with their secrets hashed', async () => {
  const store = open();
  const users = new Users(store);
  await users.add('ada@example.com', ['shop']);
  await users.setPassword('ada@example.com', 'correct horse battery');
  const session = await new Sessions(store).create('ada@example.com');
  const { token } = await new ShareLinks(store).create('shop', { password: 'share password' });
  expect(await users.authenticate('ada@example.com', 'correct horse battery')).not.toBeNull();
  const redis = new Redis(inject('redisUrl'));
  const keys = await redis.keys(`${prefix}*`);
  const values = (
    await Promise.all(keys.map((k) => redis.type(k).then((t) => (t === 'string' ? redis.get(k) : ''))))
  ).join('\n');
  redis.disconnect();
  for (const secret of ['correct horse battery', session, token, 'share password']) {
    expect(values).not.toContain(secret);
    expect(keys.join('\n')).not.toContain(secret);
  }
});

it("sums a project's refusal counts over every flush, a flush written twice once, per hour and status", async () => {
  const counts = new RefusalCounts(open());
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  await counts.add('shop', 'loop-a:0', [{ hour, status: 400, count: 2 }]);
  await counts.add('shop', 'loop-a:0', [{ hour, status: 400, count: 2 }]); // the same flush again
  await counts.add('shop', 'loop-b:0', [
    { hour, status: 400, count: 1 },
    { hour: hour - 3_600_000, status: 429, count: 5 },
    { hour: hour - 30 * 3_600_000, status: 429, count: 7 }, // before the range asked for
  ]);
  await counts.add('other', 'loop-a:0', [{ hour, status: 403, count: 9 }]);
  expect(await counts.read('shop', hour - 23 * 3_600_000)).toEqual([
    { hour: hour - 3_600_000, status: 429, count: 5 },
    { hour, status: 400, count: 3 },
  ]);
});
