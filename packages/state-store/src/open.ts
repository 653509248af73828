// Opens the state store of a process: in Redis when it has a Redis connection (@tally/tokens'
// connectRedis: the configuration chose Redis), else LMDB in the data directory.
import type { Redis } from 'ioredis';
import { LmdbStateStore } from './lmdb-store.ts';
import { RedisStateStore } from './redis-store.ts';
import type { StateStore } from './state-store.ts';

/** What the state store reads of the configuration (@tally/config's TallyConfig). */
export interface StateStoreConfig {
  dataDir: string;
  REDIS_KEY_PREFIX: string;
}

/** The state store beside `redis` (the caller's, which it closes), or LMDB in the data directory without one. */
export function openStateStore(config: StateStoreConfig, redis: Redis | null): StateStore {
  return redis ? new RedisStateStore(redis, config.REDIS_KEY_PREFIX) : new LmdbStateStore(config.dataDir);
}
