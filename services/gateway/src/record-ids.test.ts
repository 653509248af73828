// Record ids made by the gateway: valid UUIDv7s, distinct, in order, from the random pool.
import { expect, it } from 'vitest';
import { newRecordId } from './record-ids.ts';

it('makes distinct UUIDv7s in increasing order, within one millisecond too, across pool refills', () => {
  const now = Date.UTC(2026, 10, 24, 12);
  const ids = Array.from({ length: 1000 }, (_, i) => newRecordId(now + (i < 500 ? 0 : 1)));
  for (const id of ids)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(new Set(ids).size).toBe(1000);
  expect([...ids].sort()).toEqual(ids);
  // The time is the first 48 bits.
  expect(Number.parseInt((ids[0] as string).replace('-', '').slice(0, 12), 16)).toBe(now);
});
