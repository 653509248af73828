// The gateway's IP databases (services/gateway/src/country.ts): for each (`city`, `country`), in a fresh
// child process so that one's memory does not count in the other's: the time to read it into shared memory,
// the resident memory it adds (RssAnon + RssShmem from /proc, before and after), and the cost of a lookup
// over `--lookups` pseudo-random public IPv4 addresses and IPv6 ones. Prints one JSON object.
//
//   node --conditions=@tally/source --import tsx bench/geo.ts [--lookups 200000]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { machineInfo } from './lib/machine.ts';
import { parseArgs } from './lib/report.ts';

const options = parseArgs({ lookups: 200_000, kind: '' }, process.argv.slice(2));

function memoryMiB(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return Math.round(((field('RssAnon') + field('RssShmem')) / 1024) * 10) / 10;
}

async function measure(kind: 'city' | 'country') {
  const { loadGeoDatabase, openCountryLookup } = await import('../services/gateway/src/country.ts');
  const before = memoryMiB();
  const started = process.hrtime.bigint();
  const database = loadGeoDatabase(kind);
  const lookup = openCountryLookup(database);
  const loadMs = Number(process.hrtime.bigint() - started) / 1e6;
  const after = memoryMiB();
  const v4 = Array.from({ length: options.lookups }, (_, i) => {
    const n = (Math.imul(i + 1, 2654435761) >>> 0) | 0x01000000;
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  });
  const v6 = Array.from(
    { length: options.lookups / 10 },
    (_, i) => `2a00:${((i * 7919) % 65536).toString(16)}::1`,
  );
  const time = (ips: string[]) => {
    let found = 0;
    const t = process.hrtime.bigint();
    for (const ip of ips) if (lookup.placeOf(ip).country) found++;
    return {
      microsPerLookup: Number(process.hrtime.bigint() - t) / 1000 / ips.length,
      found: found / ips.length,
    };
  };
  time(v4.slice(0, 10_000)); // warm-up
  return {
    kind,
    fileMiB: Math.round(((database.v4.byteLength + (database.v6?.byteLength ?? 0)) / 2 ** 20) * 10) / 10,
    loadMs: Math.round(loadMs),
    addedMemoryMiB: Math.round((after - before) * 10) / 10,
    ipv4: time(v4),
    ipv6: time(v6),
  };
}

if (options.kind) {
  process.stdout.write(JSON.stringify(await measure(options.kind as 'city' | 'country')));
} else {
  const self = fileURLToPath(import.meta.url);
  const run = (kind: string) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [
          '--conditions=@tally/source',
          '--import',
          'tsx',
          self,
          '--kind',
          kind,
          '--lookups',
          String(options.lookups),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      ),
    );
  const result = {
    bench: 'geo',
    machine: machineInfo(),
    node: process.version,
    databases: [run('city'), run('country')],
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
