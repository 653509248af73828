// The per-IP rate limit's counters in memory shared by every event loop of the process (GATEWAY_WORKERS),
// when there is no Redis: a @fastify/rate-limit store over a SharedArrayBuffer that the main thread creates
// and hands to each gateway thread. @fastify/rate-limit's own in-memory store is per event loop, so with
// N loops a client got N times its limit (the kernel spreads its connections over the loops).
// The table: buckets of SLOTS_PER_BUCKET slots, each slot a key's 64-bit hash, its count and the start of
// its fixed window; a bucket is changed under its own lock (shared-buckets.ts), so the counts are exact
// across threads. Keys are hashed, never stored: no raw IP is kept (two keys would share a count only if
// both 32-bit hashes collided, ~1 in 10^9 for 100,000 keys).
// A bucket full of live windows gives up the slot whose window started first (that key starts a new
// window), as the LRU it replaces (@fastify/rate-limit's, 100,000 keys) forgot its least recent key.
import { HASH_SEEDS, hashKey, lockBucket, unlockBucket } from './shared-buckets.ts';

/** Slots per bucket: a key is looked for in its bucket only. */
const SLOTS_PER_BUCKET = 16;
/** Int32 fields per slot: hash high, hash low, count; the window's start is in a Float64Array of its own. */
const FIELDS = 3;

export interface SharedRateLimitTable {
  /** Bucket locks (one Int32 each), then the slots' fields. */
  readonly buffer: SharedArrayBuffer;
  /** Each slot's window start (ms since the epoch; 0: empty). */
  readonly windows: SharedArrayBuffer;
}

/**
 * A table for about `keys` clients at once: twice as many slots (rounded up to a power of two of buckets),
 * so that a bucket rarely fills before the table holds `keys`. Its pages are touched (resident) only as
 * keys come: 20 bytes a slot.
 */
export function createSharedRateLimitTable(keys = 100_000): SharedRateLimitTable {
  let buckets = 1;
  while (buckets * SLOTS_PER_BUCKET < 2 * keys) buckets *= 2;
  const slots = buckets * SLOTS_PER_BUCKET;
  return {
    buffer: new SharedArrayBuffer(4 * (buckets + slots * FIELDS)),
    windows: new SharedArrayBuffer(8 * slots),
  };
}

/** What a store answers @fastify/rate-limit: the key's count in its window and the window's time left. */
export interface RateLimitState {
  current: number;
  ttl: number;
}
type Callback = (error: Error | null, state: RateLimitState) => void;

/** The store @fastify/rate-limit calls: its `store` option is a class, built with the plugin's settings. */
export class SharedRateLimitStore {
  readonly #locks: Int32Array;
  readonly #slots: Int32Array;
  readonly #windows: Float64Array;
  readonly #bucketMask: number;
  readonly #now: () => number;

  constructor(table: SharedRateLimitTable, now: () => number = Date.now) {
    const slots = table.windows.byteLength / 8;
    const buckets = slots / SLOTS_PER_BUCKET;
    this.#locks = new Int32Array(table.buffer, 0, buckets);
    this.#slots = new Int32Array(table.buffer, 4 * buckets, slots * FIELDS);
    this.#windows = new Float64Array(table.windows);
    this.#bucketMask = buckets - 1;
    this.#now = now;
  }

  /** A @fastify/rate-limit store class over `table` (the plugin builds it with its settings, ignored here). */
  static over(table: SharedRateLimitTable): new () => SharedRateLimitStore {
    return class extends SharedRateLimitStore {
      constructor() {
        super(table);
      }
    };
  }

  /** Counts one request of `key` and answers its count in the window (a fixed window, as Redis's store). */
  incr(key: string, callback: Callback, timeWindow: number): void {
    callback(null, this.count(key, timeWindow, true));
  }

  /** The key's count without counting (@fastify/rate-limit's `increment: false`). */
  read(key: string, callback: Callback, timeWindow: number): void {
    callback(null, this.count(key, timeWindow, false));
  }

  /** Every route shares the table: the gateway limits one route (and counts per client, not per route). */
  child(): SharedRateLimitStore {
    return this;
  }

  count(key: string, timeWindow: number, increment: boolean): RateLimitState {
    const high = hashKey(key, HASH_SEEDS[0]);
    const low = hashKey(key, HASH_SEEDS[1]);
    const bucket = high & this.#bucketMask;
    const first = bucket * SLOTS_PER_BUCKET;
    const now = this.#now();
    const slots = this.#slots;
    const windows = this.#windows;
    lockBucket(this.#locks, bucket);
    try {
      let free = -1;
      let oldest = first;
      for (let slot = first; slot < first + SLOTS_PER_BUCKET; slot++) {
        const start = windows[slot] as number;
        const live = start !== 0 && start + timeWindow > now;
        if (slots[slot * FIELDS] === high && slots[slot * FIELDS + 1] === low && start !== 0) {
          if (!live) {
            if (!increment) return { current: 0, ttl: 0 };
            windows[slot] = now;
            slots[slot * FIELDS + 2] = 1;
            return { current: 1, ttl: timeWindow };
          }
          const current = (slots[slot * FIELDS + 2] as number) + (increment ? 1 : 0);
          slots[slot * FIELDS + 2] = current;
          return { current, ttl: start + timeWindow - now };
        }
        if (!live && free === -1) free = slot;
        if (start < (windows[oldest] as number)) oldest = slot;
      }
      if (!increment) return { current: 0, ttl: 0 };
      const slot = free === -1 ? oldest : free;
      slots[slot * FIELDS] = high;
      slots[slot * FIELDS + 1] = low;
      slots[slot * FIELDS + 2] = 1;
      windows[slot] = now;
      return { current: 1, ttl: timeWindow };
    } finally {
      unlockBucket(this.#locks, bucket);
    }
  }
}
