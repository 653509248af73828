// Opens the state store the configuration names: Redis when REDIS_URL is set, else LMDB in TALLY_DATA_DIR.
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { LmdbStateStore } from './lmdb-store.ts';
import { RedisStateStore } from './redis-store.ts';
import type { StateStore } from './state-store.ts';

export interface StateStoreSettings {
  TALLY_DATA_DIR: string;
  REDIS_URL?: string | undefined;
  REDIS_KEY_PREFIX: string;
}

export function openStateStore(settings: StateStoreSettings): StateStore {
  if (!settings.REDIS_URL) return new LmdbStateStore(resolve(settings.TALLY_DATA_DIR));
  const redis = new Redis(settings.REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  const store = new RedisStateStore(redis, settings.REDIS_KEY_PREFIX);
  return {
    get: (c, k) => store.get(c, k),
    put: (c, k, v, ttl) => store.put(c, k, v, ttl),
    delete: (c, k) => store.delete(c, k),
    take: (c, k) => store.take(c, k),
    list: (c) => store.list(c),
    async close() {
      redis.disconnect();
    },
  };
}
