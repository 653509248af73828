// The token store of a process: in Redis when it has a Redis connection (connectRedis: the configuration
// chose Redis), else the data directory's tokens.json. The gateway, the dashboard and the CLI open it here.
import type { Redis } from 'ioredis';
import { FileTokenStore } from './file-store.ts';
import { RedisTokenStore } from './redis-store.ts';
import type { TokenStore } from './token.ts';

/** What the token store reads of the configuration (@tally/config's TallyConfig). */
export interface TokenStoreConfig {
  dataDir: string;
  REDIS_KEY_PREFIX: string;
}

/** The token store beside `redis` (connectRedis), or the data directory's file without one. */
export function openTokenStore(config: TokenStoreConfig, redis: Redis | null): TokenStore {
  return redis ? new RedisTokenStore(redis, config.REDIS_KEY_PREFIX) : new FileTokenStore(config.dataDir);
}
