import { describe, expect, it } from 'vitest';
import { loadCountryDatabase, openCountryLookup } from './country.ts';

describe('country lookup (DB-IP Lite, shipped in the npm package)', () => {
  const lookup = openCountryLookup();

  it('finds the country of public IPv4 and IPv6 addresses', () => {
    expect(lookup.countryOf('8.8.8.8')).toBe('US');
    expect(lookup.countryOf('81.2.69.142')).toBe('GB');
    expect(lookup.countryOf('2a00:1450:4001:82b::200e')).toBe('DE');
  });

  it('reads IPv4 clients of a dual-stack socket (::ffff:a.b.c.d)', () => {
    expect(lookup.countryOf('::ffff:81.2.69.142')).toBe('GB');
  });

  it('answers null for private, loopback and malformed addresses', () => {
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', '192.168.0.1', 'not-an-ip', '']) {
      expect(lookup.countryOf(ip), ip).toBeNull();
    }
  });

  it('knows when its database was built', () => {
    expect(Date.parse(lookup.builtAt)).toBeGreaterThan(Date.parse('2025-01-01'));
  });
});

it('reads the database shared between threads as the one it opens itself', () => {
  const shared = openCountryLookup(loadCountryDatabase());
  const own = openCountryLookup();
  expect(shared.builtAt).toBe(own.builtAt);
  for (const ip of ['8.8.8.8', '2a00:1450::1', '::ffff:81.2.69.142', '127.0.0.1']) {
    expect(shared.countryOf(ip)).toBe(own.countryOf(ip));
  }
});
