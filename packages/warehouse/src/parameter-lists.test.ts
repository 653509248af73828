// The lists a consumer looks up are cut by count and by the size ClickHouse reads them as, in order.
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { PARAMETER_BYTES, parameterLists } from './parameter-lists.ts';

/** The parameter as @clickhouse/client writes an Array(String): ['a','b'] (escaping at most doubles a value). */
const written = (list: readonly string[]) => `[${list.map((v) => `'${v}'`).join(',')}]`;

it('cuts 5,000 record ids into three lists under the bound, in order', () => {
  const ids = Array.from({ length: 5000 }, () => randomUUID());
  const lists = parameterLists(ids, 10_000);
  expect(lists.map((l) => l.length)).toEqual([1680, 1680, 1640]);
  expect(lists.flat()).toEqual(ids);
  for (const list of lists) expect(Buffer.byteLength(written(list))).toBeLessThanOrEqual(PARAMETER_BYTES);
});

it('cuts long and non-ASCII values by their bytes, and by count', () => {
  const long = Array.from({ length: 1000 }, (_, i) => `${'é'.repeat(120)}${i}`.padEnd(250, 'x'));
  const lists = parameterLists(long, 10_000);
  expect(lists.flat()).toEqual(long);
  for (const list of lists) expect(Buffer.byteLength(written(list))).toBeLessThanOrEqual(PARAMETER_BYTES);
  expect(lists.length).toBeGreaterThan(4);
  expect(parameterLists(['a', 'b', 'c'], 2)).toEqual([['a', 'b'], ['c']]);
  expect(parameterLists([], 2)).toEqual([]);
  // A value over the bound alone is a list of its own (the server decides).
  expect(parameterLists(['y', 'x'.repeat(PARAMETER_BYTES), 'z'], 10)).toEqual([
    ['y'],
    ['x'.repeat(PARAMETER_BYTES)],
    ['z'],
  ]);
});
