// The Redis connection a process shares for its tokens, visitor-id salts, rate-limit counts and state
// store, made in this one place: only when the configuration chose Redis (config.backends.state), with the
// options every Tally process uses, and with ioredis loaded then and only then (a gateway thread on the
// data directory never loads it: each worker thread holds its own copy of every module it loads). ioredis
// is CommonJS, so a synchronous require keeps the stores' openers synchronous. In this package because
// every process that shares state through Redis opens its tokens (the state store depends on it too).
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

/** What the connection reads of the configuration (@tally/config's TallyConfig). */
export interface StateBackendConfig {
  backends: { state: { kind: 'redis'; url: string } | { kind: 'files' } };
}

export interface RedisConnectionOptions {
  /** Told of the connection's errors (ioredis reconnects by itself); without it they are ignored. */
  onError?: (error: Error) => void;
  /**
   * Send the commands of one event-loop turn in one write (ioredis' auto-pipelining): the gateway's, whose
   * every request runs the rate limit's script.
   */
  autoPipelining?: boolean;
}

/** The Redis connection the configuration names, or null when state is kept in the data directory. */
export function connectRedis(config: StateBackendConfig, options: RedisConnectionOptions = {}): Redis | null {
  const backend = config.backends.state;
  if (backend.kind !== 'redis') return null;
  const { Redis: Client } = createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis };
  const redis = new Client(backend.url, {
    connectTimeout: 2000,
    maxRetriesPerRequest: 1,
    ...(options.autoPipelining && { enableAutoPipelining: true }),
  });
  redis.on('error', options.onError ?? (() => {}));
  return redis;
}
