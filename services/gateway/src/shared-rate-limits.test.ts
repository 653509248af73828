// The shared rate-limit table on its own: fixed windows per key, reads that do not count, many keys, and
// the eviction of the oldest window when a bucket is full. (Across threads: gateway-threads.test.ts.)
import { expect, it } from 'vitest';
import { createSharedRateLimitTable, SharedRateLimitStore } from './shared-rate-limits.ts';

const HOUR = 3_600_000;

it('counts each key in a fixed window, and starts again when it has passed', () => {
  let now = 1_800_000_000_000;
  const table = createSharedRateLimitTable(1000);
  const store = new SharedRateLimitStore(table, () => now);
  expect(store.count('198.51.100.1', HOUR, true)).toEqual({ current: 1, ttl: HOUR });
  now += 1000;
  expect(store.count('198.51.100.1', HOUR, true)).toEqual({ current: 2, ttl: HOUR - 1000 });
  expect(store.count('198.51.100.2', HOUR, true)).toEqual({ current: 1, ttl: HOUR });
  expect(store.count('198.51.100.1', HOUR, false)).toEqual({ current: 2, ttl: HOUR - 1000 });
  expect(store.count('198.51.100.3', HOUR, false)).toEqual({ current: 0, ttl: 0 });
  now += HOUR - 1000; // the first key's window ends
  expect(store.count('198.51.100.1', HOUR, false)).toEqual({ current: 0, ttl: 0 });
  expect(store.count('198.51.100.1', HOUR, true)).toEqual({ current: 1, ttl: HOUR });
  // Two stores over one table (as two threads hold) see the same counts.
  const other = new SharedRateLimitStore(table, () => now);
  expect(other.count('198.51.100.1', HOUR, true).current).toBe(2);
});

it('keeps exact counts for many keys', () => {
  const table = createSharedRateLimitTable(10_000);
  const a = new SharedRateLimitStore(table);
  const b = new SharedRateLimitStore(table);
  for (let round = 1; round <= 3; round++) {
    for (let i = 0; i < 5000; i++) {
      const store = i % 2 ? a : b;
      expect(store.count(`10.0.${i >> 8}.${i & 255}`, HOUR, true).current).toBe(round);
    }
  }
});

it('gives up the oldest window of a full bucket for a new key', () => {
  let now = 1_800_000_000_000;
  // One bucket of 16 slots: the 17th key takes the slot of the key whose window started first.
  const store = new SharedRateLimitStore(createSharedRateLimitTable(8), () => now);
  for (let i = 0; i < 16; i++) {
    store.count(`key-${i}`, HOUR, true);
    now += 1;
  }
  store.count('key-0', HOUR, true); // counted, but its window still started first
  expect(store.count('key-16', HOUR, true).current).toBe(1);
  expect(store.count('key-0', HOUR, false).current).toBe(0);
  expect(store.count('key-1', HOUR, false).current).toBe(1);
});
