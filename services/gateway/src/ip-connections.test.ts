// The table of connections per client IP on its own: a cap per key, exact releases, two holders of one
// table (as two event loops) counting together, and a full bucket letting a key in uncounted. (Across
// real threads and sockets: connection-caps.test.ts.)
import { expect, it } from 'vitest';
import { createIpConnectionTable, IpConnections, OVER_CAP, UNCOUNTED } from './ip-connections.ts';

it('counts each key up to its cap, and gives the connections back', () => {
  const counts = new IpConnections(createIpConnectionTable(100));
  const slots = [1, 2, 3].map(() => counts.acquire('198.51.100.1', 3));
  expect(slots.every((slot) => slot >= 0)).toBe(true);
  expect(counts.acquire('198.51.100.1', 3)).toBe(OVER_CAP);
  expect(counts.acquire('198.51.100.2', 3)).toBeGreaterThanOrEqual(0);
  expect(counts.count('198.51.100.1')).toBe(3);
  counts.release(slots[0] as number);
  expect(counts.count('198.51.100.1')).toBe(2);
  expect(counts.acquire('198.51.100.1', 3)).toBeGreaterThanOrEqual(0);
  for (const slot of slots.slice(1)) counts.release(slot);
  counts.release(OVER_CAP); // nothing was counted for it
  expect(counts.count('198.51.100.1')).toBe(1);
});

it('is one count for every holder of the table', () => {
  const table = createIpConnectionTable(10_000);
  const a = new IpConnections(table);
  const b = new IpConnections(table);
  const held: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const key = `10.0.${i >> 8}.${i & 255}`;
    held.push((i % 2 ? a : b).acquire(key, 2), (i % 2 ? b : a).acquire(key, 2));
    expect(a.acquire(key, 2)).toBe(OVER_CAP);
  }
  expect(held.filter((slot) => slot < 0)).toEqual([]);
  for (const slot of held) (slot % 2 ? a : b).release(slot);
  expect(a.count('10.0.0.1')).toBe(0);
  expect(b.acquire('10.0.0.1', 2)).toBeGreaterThanOrEqual(0);
});

it('gives a freed slot to another key without mixing their counts', () => {
  // One bucket of 16 slots.
  const counts = new IpConnections(createIpConnectionTable(4));
  const first = Array.from({ length: 16 }, (_, i) => counts.acquire(`key-${i}`, 5));
  expect(new Set(first).size).toBe(16);
  // Full: a 17th address is let in uncounted (the per-IP cap fails open; the process's cap still holds).
  expect(counts.acquire('key-16', 5)).toBe(UNCOUNTED);
  counts.release(UNCOUNTED);
  counts.release(first[3] as number); // key-3 has none left: its slot is free
  const reused = counts.acquire('key-16', 5);
  expect(reused).toBe(first[3]);
  expect(counts.count('key-16')).toBe(1);
  expect(counts.count('key-3')).toBe(0);
  expect(counts.count('key-4')).toBe(1);
});
