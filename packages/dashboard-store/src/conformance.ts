// The conformance suite every state-store backend runs (LMDB in dashboard-store.test.ts, Redis in
// test/dashboard-store-redis.test.ts): documents by collection, expiry, an atomic take, and listing that
// keeps collections apart.
import { describe, expect, it } from 'vitest';
import type { StateStore } from './state-store.ts';

export function stateStoreConformance(name: string, open: () => StateStore, namespace: string): void {
  describe(`state store conformance: ${name}`, () => {
    const c = (collection: string) => `${namespace}${collection}`;

    it('gets, lists and deletes documents per collection', async () => {
      const store = open();
      await store.put(c('a'), 'k1', { n: 1 });
      await store.put(c('a'), 'k2', { n: 2 });
      await store.put(c('ab'), 'k1', { n: 3 });
      await store.put(c('a:x'), 'k1', { n: 4 });
      expect(await store.get(c('a'), 'k1')).toEqual({ n: 1 });
      expect((await store.list<{ n: number }>(c('a'))).map((d) => d.n).sort()).toEqual([1, 2]);
      expect(await store.delete(c('a'), 'k1')).toBe(true);
      expect(await store.delete(c('a'), 'k1')).toBe(false);
      expect(await store.get(c('a'), 'k1')).toBeNull();
      expect((await store.list<{ n: number }>(c('a'))).map((d) => d.n)).toEqual([2]);
      await store.close();
    });

    it('forgets expired documents, in get and list', async () => {
      const store = open();
      await store.put(c('ttl'), 'short', { n: 1 }, 20);
      await store.put(c('ttl'), 'long', { n: 2 }, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(await store.get(c('ttl'), 'short')).toBeNull();
      expect(await store.list(c('ttl'))).toEqual([{ n: 2 }]);
      await store.close();
    });

    it('gives a document to one taker only', async () => {
      const store = open();
      await store.put(c('once'), 'link', { email: 'x' }, 60_000);
      const taken = await Promise.all([store.take(c('once'), 'link'), store.take(c('once'), 'link')]);
      expect(taken.filter((t) => t !== null)).toEqual([{ email: 'x' }]);
      expect(await store.take(c('once'), 'missing')).toBeNull();
      await store.close();
    });

    it('sees what another handle wrote (the CLI beside a running dashboard)', async () => {
      const reader = open();
      await reader.get(c('shared'), 'x'); // a read before the write
      const writer = open();
      await writer.put(c('shared'), 'x', { n: 1 });
      expect(await reader.get(c('shared'), 'x')).toEqual({ n: 1 });
      expect(await reader.list(c('shared'))).toEqual([{ n: 1 }]);
      await writer.close();
      await reader.close();
    });
  });
}
