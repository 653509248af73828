// How many connections (or, behind a trusted proxy, requests in progress) each client IP holds on the
// public port, counted in a SharedArrayBuffer that every event loop of the process shares (GATEWAY_WORKERS),
// so that GATEWAY_MAX_CONNECTIONS_PER_IP holds for the process and not once per loop (the kernel spreads a
// client's connections over the loops' sockets). The table is buckets of SLOTS_PER_BUCKET slots, each a
// key's 64-bit hash and its count, changed under the bucket's lock (shared-buckets.ts); a slot whose count
// falls to 0 is free again. A connection remembers the slot it was counted in and gives it back there, so
// a release is exact even when another key later takes a freed slot. A key whose bucket has no free slot
// (16 other addresses with connections open hashed to it: rare with the table four times larger than the
// keys it is sized for) is let in uncounted: the per-IP cap fails open there, the process's connection cap
// (GATEWAY_MAX_CONNECTIONS) still holds.
import { HASH_SEEDS, hashKey, lockBucket, unlockBucket } from './shared-buckets.ts';

const SLOTS_PER_BUCKET = 16;
/** Int32 fields per slot: hash high, hash low, count. */
const FIELDS = 3;

/** The table's memory: bucket locks (one Int32 each), then the slots' fields. */
export interface IpConnectionTable {
  readonly buffer: SharedArrayBuffer;
}

/** A table for about `keys` client addresses with connections open at once (12 bytes per slot, 4 per key). */
export function createIpConnectionTable(keys = 16_384): IpConnectionTable {
  let buckets = 1;
  while (buckets * SLOTS_PER_BUCKET < 4 * keys) buckets *= 2;
  return { buffer: new SharedArrayBuffer(4 * (buckets + buckets * SLOTS_PER_BUCKET * FIELDS)) };
}

/** The key was over its cap: nothing was counted. */
export const OVER_CAP = -1;
/** The key's bucket was full: let in, but not counted (release nothing). */
export const UNCOUNTED = -2;

export class IpConnections {
  readonly #locks: Int32Array;
  readonly #slots: Int32Array;
  readonly #bucketMask: number;

  constructor(table: IpConnectionTable) {
    const buckets = table.buffer.byteLength / 4 / (1 + SLOTS_PER_BUCKET * FIELDS);
    this.#locks = new Int32Array(table.buffer, 0, buckets);
    this.#slots = new Int32Array(table.buffer, 4 * buckets, buckets * SLOTS_PER_BUCKET * FIELDS);
    this.#bucketMask = buckets - 1;
  }

  /**
   * Counts one more connection of `key` unless it holds `cap` already. Answers the slot it was counted in
   * (give it to release), OVER_CAP, or UNCOUNTED.
   */
  acquire(key: string, cap: number): number {
    const high = hashKey(key, HASH_SEEDS[0]);
    const low = hashKey(key, HASH_SEEDS[1]);
    const bucket = high & this.#bucketMask;
    const first = bucket * SLOTS_PER_BUCKET;
    const slots = this.#slots;
    lockBucket(this.#locks, bucket);
    try {
      let free = -1;
      for (let slot = first; slot < first + SLOTS_PER_BUCKET; slot++) {
        const count = slots[slot * FIELDS + 2] as number;
        if (count === 0) {
          if (free === -1) free = slot;
          continue;
        }
        if (slots[slot * FIELDS] === high && slots[slot * FIELDS + 1] === low) {
          if (count >= cap) return OVER_CAP;
          slots[slot * FIELDS + 2] = count + 1;
          return slot;
        }
      }
      if (free === -1) return UNCOUNTED;
      slots[free * FIELDS] = high;
      slots[free * FIELDS + 1] = low;
      slots[free * FIELDS + 2] = 1;
      return free;
    } finally {
      unlockBucket(this.#locks, bucket);
    }
  }

  /** Gives back a connection counted in `slot` (what acquire answered); OVER_CAP and UNCOUNTED are no-ops. */
  release(slot: number): void {
    if (slot < 0) return;
    const bucket = Math.floor(slot / SLOTS_PER_BUCKET);
    lockBucket(this.#locks, bucket);
    try {
      const count = this.#slots[slot * FIELDS + 2] as number;
      if (count > 0) this.#slots[slot * FIELDS + 2] = count - 1;
    } finally {
      unlockBucket(this.#locks, bucket);
    }
  }

  /** How many connections `key` holds now (for tests and metrics). */
  count(key: string): number {
    const high = hashKey(key, HASH_SEEDS[0]);
    const low = hashKey(key, HASH_SEEDS[1]);
    const bucket = high & this.#bucketMask;
    const first = bucket * SLOTS_PER_BUCKET;
    lockBucket(this.#locks, bucket);
    try {
      for (let slot = first; slot < first + SLOTS_PER_BUCKET; slot++) {
        const count = this.#slots[slot * FIELDS + 2] as number;
        if (count > 0 && this.#slots[slot * FIELDS] === high && this.#slots[slot * FIELDS + 1] === low) {
          return count;
        }
      }
      return 0;
    } finally {
      unlockBucket(this.#locks, bucket);
    }
  }
}
