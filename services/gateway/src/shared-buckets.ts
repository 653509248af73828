// What the tables the gateway's event loops share in a SharedArrayBuffer are made of (the rate limit's
// counts, shared-rate-limits.ts, and the connections per client IP, ip-connections.ts): a key's 64-bit
// hash (keys are hashed, never stored: no raw IP is kept), and a lock per bucket of slots, held for a few
// dozen instructions while a bucket is read and changed, so that counts are exact across threads.

/** FNV-1a over the key's UTF-16 code units with a final mix; two seeds give the key's 64-bit hash. */
export function hashKey(key: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** The two seeds of a key's 64-bit hash (its high and low halves). */
export const HASH_SEEDS = [0x811c9dc5, 0x2f5a3b17] as const;

// A futex-style lock (0: free, 1: held, 2: held and waited for): uncontended, one compareExchange to take
// it and one exchange to give it back. A holder descheduled on a busy machine is waited for with
// Atomics.wait instead of spinning for its whole time slice.
export function lockBucket(locks: Int32Array, bucket: number): void {
  if (Atomics.compareExchange(locks, bucket, 0, 1) === 0) return;
  for (let spin = 0; spin < 100; spin++) {
    if (Atomics.load(locks, bucket) === 0 && Atomics.compareExchange(locks, bucket, 0, 1) === 0) return;
  }
  while (Atomics.exchange(locks, bucket, 2) !== 0) Atomics.wait(locks, bucket, 2, 10);
}

/** The exchange is atomic: the slot's plain writes made under the lock are visible to its next holder. */
export function unlockBucket(locks: Int32Array, bucket: number): void {
  if (Atomics.exchange(locks, bucket, 0) === 2) Atomics.notify(locks, bucket, 1);
}
