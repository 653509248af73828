import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'mmdb-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { geoDatabaseFiles } from './country.ts';
import { addressBytes, MmdbFile } from './mmdb-file.ts';

// mmdb-lib reads the whole file from memory: the reference the file reader must answer as.
const files = { ...geoDatabaseFiles('city'), country: geoDatabaseFiles('country').v4 };

function pseudoRandomIPv4(count: number, seed: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const n = Math.imul(i + seed, 2654435761) >>> 0;
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  });
}
function pseudoRandomIPv6(count: number, seed: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const groups = Array.from(
      { length: 8 },
      (_, g) => (Math.imul(i * 8 + g + seed, 2246822519) >>> 16) & 0xffff,
    );
    // Mostly in the regional registries' blocks (2001::/16, 2400::/12 … 2c00::/12), where the database has
    // entries; some anywhere.
    const blocks = [0x2001, 0x2400, 0x2600, 0x2800, 0x2a00, 0x2c00];
    const block = blocks[i % blocks.length] as number;
    if (i % 5 !== 0) groups[0] = block === 0x2001 ? block : block | ((groups[0] as number) & 0x0f);
    return groups.map((group) => group.toString(16)).join(':');
  });
}

const EDGES = [
  '0.0.0.0',
  '255.255.255.255',
  '127.0.0.1',
  '10.1.2.3',
  '8.8.8.8',
  '81.2.69.142',
  '2.16.0.1',
  '::',
  '::1',
  '2a00:1450:4001:82b::200e',
  '2a00:1450:4001:082b:0000:0000:0000:200e',
  '2A00:1450:4001:82B::200E',
  '2001:db8::1',
  '::ffff:81.2.69.142',
  '64:ff9b::8.8.8.8',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
];

describe.each([
  ['the city database, IPv4 file', files.v4],
  ['the city database, IPv6 file', files.v6],
  ['the country database (one file, IPv4 and IPv6)', files.country],
])('%s read in blocks answers as mmdb-lib reading it from memory', (_name, file) => {
  const reference = new Reader(readFileSync(file));
  const ipv6File = reference.metadata.ipVersion === 6;
  // The city edition's IPv6 file has no IPv4 entries (country.ts asks the IPv4 file for those), but it is
  // asked them too: what matters is the same answer.
  const addresses = [
    ...EDGES.filter((ip) => ipv6File || !ip.includes(':')),
    ...pseudoRandomIPv4(file === files.v6 ? 2_000 : 40_000, 7),
    ...(ipv6File ? pseudoRandomIPv6(20_000, 11) : []),
  ];

  it('has the same metadata', () => {
    const { metadata } = new MmdbFile(file);
    expect(metadata).toEqual({
      nodeCount: reference.metadata.nodeCount,
      recordSize: reference.metadata.recordSize,
      ipVersion: reference.metadata.ipVersion,
      buildEpoch: reference.metadata.buildEpoch,
    });
  });

  // A cache of 16 blocks: nearly every node is read from the file again, blocks are evicted and reused,
  // and nodes and records across two blocks are read in two pieces; the default cache keeps most of them.
  it.each([
    ['a cache of 16 blocks', 64 * 1024],
    ['the default cache', undefined],
  ])('finds the same record for every address with %s', (_cache, cacheBytes) => {
    const reader = new MmdbFile(file, cacheBytes);
    let found = 0;
    for (const ip of addresses) {
      const expected = reference.get(ip);
      const actual = reader.get(ip);
      if (expected) found++;
      if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, ip).toEqual(expected);
    }
    // The comparison is not vacuous: most of these addresses have an entry.
    expect(found / addresses.length).toBeGreaterThan(0.5);
  });
});

describe('addresses', () => {
  it('reads IPv4 and every IPv6 notation to the same bytes', () => {
    expect([...(addressBytes('81.2.69.142') ?? [])]).toEqual([81, 2, 69, 142]);
    const full = [0x2a, 0x00, 0x14, 0x50, 0x40, 0x01, 0x08, 0x2b, 0, 0, 0, 0, 0, 0, 0x20, 0x0e];
    for (const ip of [
      '2a00:1450:4001:82b::200e',
      '2a00:1450:4001:082b:0:0:0:200e',
      '2A00:1450:4001:82B::200E',
    ]) {
      expect([...(addressBytes(ip) ?? [])], ip).toEqual(full);
    }
    expect([...(addressBytes('::ffff:1.2.3.4') ?? [])]).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4,
    ]);
    expect([...(addressBytes('::') ?? [])]).toEqual(new Array(16).fill(0));
    expect([...(addressBytes('fe80::1%eth0') ?? [])]).toEqual([0xfe, 0x80, ...new Array(13).fill(0), 1]);
  });

  it('answers null for what is not an address, and for IPv6 in an IPv4 file', () => {
    const reader = new MmdbFile(files.v4);
    for (const ip of ['', 'not-an-ip', '1.2.3', '256.1.1.1', '1.2.3.4.5', ':::', '1:2:3:4:5:6:7:8:9']) {
      expect(addressBytes(ip), ip).toBeNull();
      expect(reader.get(ip), ip).toBeNull();
    }
    expect(reader.get('2a00:1450:4001:82b::200e')).toBeNull();
  });
});

describe('files that are not MMDB', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-mmdb-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a file without the metadata marker', () => {
    const file = join(dir, 'text.mmdb');
    writeFileSync(file, 'not a database');
    expect(() => new MmdbFile(file)).toThrow(/not an MMDB file/);
  });

  it('refuses a file cut short before the end of its search tree', () => {
    const whole = readFileSync(files.country);
    const reference = new Reader(whole);
    // The tree's first 1,000 bytes, then the metadata: its node count says the tree is longer.
    const metadataStart = whole.lastIndexOf(Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'));
    const file = join(dir, 'short.mmdb');
    writeFileSync(file, Buffer.concat([whole.subarray(0, 1000), whole.subarray(metadataStart)]));
    expect(reference.metadata.searchTreeSize).toBeGreaterThan(1000);
    expect(() => new MmdbFile(file)).toThrow(/cut short/);
  });
});
