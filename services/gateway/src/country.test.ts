import { describe, expect, it } from 'vitest';
import { type GeoDatabase, geoDatabaseFiles, openCountryLookup } from './country.ts';
import { MmdbFile } from './mmdb-file.ts';

// Both databases open once for the file.
const lookups = new Map<GeoDatabase, ReturnType<typeof openCountryLookup>>();
const lookupOf = (kind: GeoDatabase) => {
  let lookup = lookups.get(kind);
  if (!lookup) {
    lookup = openCountryLookup(kind);
    lookups.set(kind, lookup);
  }
  return lookup;
};

describe.each(['city', 'country'] as const)('IP lookup with the %s database (DB-IP Lite, npm)', (kind) => {
  it('finds the country of public IPv4 and IPv6 addresses', () => {
    const lookup = lookupOf(kind);
    expect(lookup.countryOf('8.8.8.8')).toBe('US');
    expect(lookup.countryOf('81.2.69.142')).toBe('GB');
    expect(lookup.countryOf('2a00:1450:4001:82b::200e')).toBe('DE');
  });

  it('reads IPv4 clients of a dual-stack socket (::ffff:a.b.c.d)', () => {
    expect(lookupOf(kind).countryOf('::ffff:81.2.69.142')).toBe('GB');
  });

  it('answers null for private, loopback and malformed addresses', () => {
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', '192.168.0.1', 'not-an-ip', '']) {
      expect(lookupOf(kind).countryOf(ip), ip).toBeNull();
      expect(lookupOf(kind).placeOf(ip), ip).toEqual({ country: null, region: null, city: null });
    }
  });

  it('knows when its database was built', () => {
    expect(Date.parse(lookupOf(kind).builtAt)).toBeGreaterThan(Date.parse('2025-01-01'));
  });
});

describe('regions and cities (the city database)', () => {
  it('gives the region and city of known addresses, IPv4 and IPv6', () => {
    const lookup = lookupOf('city');
    // Documented in the database's own rows (DB-IP City Lite, as shipped).
    expect(lookup.placeOf('8.8.8.8')).toEqual({ country: 'US', region: 'California', city: 'Mountain View' });
    expect(lookup.placeOf('::ffff:81.2.69.142')).toEqual({
      country: 'GB',
      region: 'England',
      city: 'London',
    });
    expect(lookup.placeOf('2.16.0.1')).toEqual({
      country: 'BR',
      region: 'Rio Grande do Sul',
      city: 'Porto Alegre',
    });
    const v6 = lookup.placeOf('2a00:1450:4001:82b::200e');
    expect(v6.country).toBe('DE');
    expect(v6.region).toEqual(expect.any(String));
    expect(v6.city).toEqual(expect.any(String));
  });

  it('gives no region or city with the country database', () => {
    expect(lookupOf('country').placeOf('8.8.8.8')).toEqual({ country: 'US', region: null, city: null });
  });
});

it('answers an address asked again (remembered by the thread) as the first time, and never for another', () => {
  const lookup = openCountryLookup('city');
  const ips = Array.from({ length: 20_000 }, (_, i) => {
    const n = Math.imul(i + 3, 2654435761) >>> 0;
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  });
  // 20,000 addresses: more than the thread remembers (8,192), so the memory is cleared and filled again.
  const first = ips.map((ip) => lookup.placeOf(ip));
  // The file read without the thread's memory of places.
  const file = new MmdbFile(geoDatabaseFiles('city').v4);
  for (let round = 0; round < 2; round++) {
    ips.forEach((ip, i) => {
      const again = lookup.placeOf(ip);
      if (JSON.stringify(again) !== JSON.stringify(first[i])) expect(again, ip).toEqual(first[i]);
    });
  }
  ips.forEach((ip, i) => {
    const row = file.get(ip) as { country_code?: string; state1?: string; city?: string } | null;
    const read = row?.country_code
      ? { country: row.country_code, region: row.state1 || null, city: row.city || null }
      : { country: null, region: null, city: null };
    if (JSON.stringify(read) !== JSON.stringify(first[i])) expect(first[i], ip).toEqual(read);
  });
  expect(new Set(first.map((place) => place.city)).size).toBeGreaterThan(1000);
});
