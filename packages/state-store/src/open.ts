// Opens the state store the configuration names: Redis when REDIS_URL is set, else LMDB in TALLY_DATA_DIR.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { Redis as RedisClient } from 'ioredis';
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
  const redis = new (redisClient())(settings.REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
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

/**
 * ioredis, loaded when a Redis store is opened: a gateway thread on the data directory does not load the
 * client (each worker thread holds its own copy of every module it loads). ioredis is CommonJS, so a
 * synchronous require keeps openStateStore synchronous.
 */
function redisClient(): typeof RedisClient {
  return (createRequire(import.meta.url)('ioredis') as { Redis: typeof RedisClient }).Redis;
}
