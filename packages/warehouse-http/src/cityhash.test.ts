// CityHash128 v1.0.2 against values of the reference binding (clickhouse-cityhash, which ClickHouse's own
// Python driver uses for the same checksums); the integration test cross-checks random inputs live.
import { describe, expect, it } from 'vitest';
import { cityHash128 } from './cityhash.ts';

const hex = (pair: [bigint, bigint]) => pair.map((half) => `0x${half.toString(16)}`);

describe('cityHash128 (v1.0.2)', () => {
  it.each([
    ['', ['0x3df09dfc64c09a2b', '0x3cb540c392e51e29']],
    ['a', ['0xd27139a1afe01ad0', '0xfd7e8ee2e4c86cf6']],
    ['ClickHouse', ['0x3704cc81c00bb612', '0x76d43ac4baf91402']],
    ['0123456789abcdef0123', ['0x1c1a47971296a84', '0x7415288f08a18cd1']],
  ])('hashes %j as the reference does', (input, expected) => {
    expect(hex(cityHash128(Buffer.from(input)))).toEqual(expected);
  });

  it('hashes inputs of 128 bytes and more (the main loop and its tail) as the reference does', () => {
    const input = Buffer.alloc(768);
    for (let i = 0; i < input.length; i++) input[i] = i % 256;
    expect(hex(cityHash128(input))).toEqual(['0xdfe5f9b62ac65971', '0x5e7fd5ccc5ecc0f']);
  });
});
