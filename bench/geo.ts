// The gateway's IP databases (services/gateway/src/country.ts): for each (`city`, `country`) and each way of
// reading it (`file`: the gateway's, positioned reads through a cache of blocks, mmdb-file.ts; `memory`:
// mmdb-lib over the files read whole into memory, as the gateway did until 2026-11-28), in a fresh child
// process so that one's memory does not count in the other's: the time to open it, the process's own
// memory it adds (RssAnon + RssShmem from /proc) once open and after the lookups, and the cost of a lookup
// over `--lookups` pseudo-random public IPv4 addresses and IPv6 ones: a first pass, then the same
// addresses again, then `--repeat` lookups of a few thousand addresses asked again and again (a site's
// visitors send several records each). Prints one JSON object.
//
//   node --conditions=@tally/source --import tsx bench/geo.ts [--lookups 200000]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { machineInfo } from './lib/machine.ts';
import { parseArgs } from './lib/report.ts';

const options = parseArgs(
  { lookups: 200_000, repeat: 200_000, kind: '', storage: '' },
  process.argv.slice(2),
);

/** The process's own memory (RssAnon + RssShmem), MiB. */
function memoryMiB(): { own: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { own: (field('RssAnon') + field('RssShmem')) / 1024 };
}
const round = (n: number) => Math.round(n * 10) / 10;

/** The lookup as the gateway did it until 2026-11-28: mmdb-lib over the files read whole into memory. */
async function inMemory(kind: 'city' | 'country') {
  const { geoDatabaseFiles } = await import('../services/gateway/src/country.ts');
  const { Reader } = await import('mmdb-lib');
  const files = geoDatabaseFiles(kind);
  const v4 = new Reader(readFileSync(files.v4));
  const v6 = files.v6 === files.v4 ? v4 : new Reader(readFileSync(files.v6));
  return {
    placeOf(ip: string) {
      try {
        const row = (ip.includes(':') ? v6 : v4).get(ip) as { country_code?: string } | null;
        return { country: row?.country_code ?? null };
      } catch {
        return { country: null };
      }
    },
  };
}

async function measure(kind: 'city' | 'country', storage: 'file' | 'memory') {
  const { openCountryLookup } = await import('../services/gateway/src/country.ts');
  const before = memoryMiB();
  const started = process.hrtime.bigint();
  const lookup = storage === 'file' ? openCountryLookup(kind) : await inMemory(kind);
  const loadMs = Number(process.hrtime.bigint() - started) / 1e6;
  const ready = memoryMiB();
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
  const first = { ipv4: time(v4), ipv6: time(v6) };
  const second = { ipv4: time(v4), ipv6: time(v6) };
  const returning = Array.from(
    { length: options.repeat },
    (_, i) => v4[(Math.imul(i, 40503) >>> 0) % 3000] as string,
  );
  const repeated = time(returning);
  const after = memoryMiB();
  return {
    kind,
    storage,
    openMs: Math.round(loadMs),
    ownMemoryAddedMiB: { open: round(ready.own - before.own), afterLookups: round(after.own - before.own) },
    firstPass: first,
    secondPass: second,
    returningAddresses: repeated,
  };
}

if (options.kind) {
  process.stdout.write(
    JSON.stringify(await measure(options.kind as 'city' | 'country', options.storage as 'file' | 'memory')),
  );
} else {
  const self = fileURLToPath(import.meta.url);
  const run = (kind: string, storage: string) =>
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
          '--storage',
          storage,
          '--lookups',
          String(options.lookups),
          '--repeat',
          String(options.repeat),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      ),
    );
  const result = {
    bench: 'geo',
    machine: machineInfo(),
    node: process.version,
    databases: [run('city', 'file'), run('city', 'memory'), run('country', 'file'), run('country', 'memory')],
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
