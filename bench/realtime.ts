// Realtime view benchmark (`npm run bench:realtime`): what one GET …/traffic/realtime costs on chDB, to pick
// how often the web app polls it (docs/design/dashboard-service.md, "The realtime view"). Seeds one project
// with `--records` pageviews and custom events (100,000 by default; 78% pageviews, the pages, referrers and
// campaigns of bench/lib/workload.ts) spread over the `--hours` (24) before now, folded into the visits
// table by the analytics consumer's own refresh in batches of 5,000, then calls the report's one function
// (`trafficRealtimeReport`, what the route calls) `--runs` times (30), without and with a filter, and
// prints one JSON object: p50, p95 and max wall time and the CPU time per call (the engine runs in this
// process), the size of the answer and the cost of its ETag hash. Progress on stderr. Never a timed test.
//
//   node --conditions=@tally/source --import tsx bench/realtime.ts [--records 100000] [--hours 24] [--runs 30]
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trafficRealtimeReport } from '@tally/reports/queries';
import { refreshVisits, type VisitRecord } from '@tally/reports/tables';
import { parseFilters } from '@tally/reports/traffic';
import { migrate, openChdbWarehouse } from '@tally/warehouse';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { parseArgs } from './lib/report.ts';
import { CAMPAIGNS, EVENTS, PAGES, REFERRERS } from './lib/workload.ts';

const options = parseArgs({ records: 100_000, hours: 24, runs: 30 }, process.argv.slice(2));
const PROJECT = 'bench';
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'NL', 'CA', 'ES', 'PL', 'SE'];

/** A deterministic pseudo-random sequence (mulberry32), so every run seeds the same records. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;

/** Visitors of 1 to 8 records a few seconds to minutes apart, their first record anywhere in the hours. */
function seedRecords(now: number): VisitRecord[] {
  const rnd = random(42);
  const span = options.hours * 3_600_000;
  const records: VisitRecord[] = [];
  for (let visitor = 0; records.length < options.records; visitor++) {
    let t = now - Math.floor(rnd() * span);
    const referrer = pick(rnd, REFERRERS);
    const campaign = pick(rnd, CAMPAIGNS);
    const country = pick(rnd, COUNTRIES);
    const n = 1 + Math.floor(rnd() * 8);
    for (let i = 0; i < n && records.length < options.records && t <= now; i++) {
      const isEvent = i > 0 && rnd() < 0.22;
      const [name, data] = pick(rnd, EVENTS) as readonly [string, Record<string, unknown>];
      records.push({
        id: `${visitor}-${i}`,
        type: isEvent ? 'event' : 'pageview',
        timestamp: t,
        visitor_id: `visitor-${visitor}`,
        path: (pick(rnd, PAGES) as [string, string])[0],
        hostname: 'shop.example',
        referrer: referrer ?? '',
        referrer_source: referrer?.includes('google') ? 'Google' : referrer ? 'Hacker News' : '',
        referrer_medium: referrer?.includes('google') ? 'search' : referrer ? 'social' : '',
        utm_source: campaign?.[0] ?? '',
        utm_medium: campaign?.[1] ?? '',
        utm_campaign: campaign?.[2] ?? '',
        utm_term: '',
        utm_content: '',
        country,
        region: '',
        city: '',
        browser: 'Chrome',
        os: 'Windows',
        device_type: 'desktop',
        screen_width: 1920,
        event_name: isEvent ? name : '',
        event_data: isEvent ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v)])) : {},
      });
      t += Math.floor(rnd() * 240_000);
    }
  }
  return records.sort((a, b) => a.timestamp - b.timestamp);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function measure(run: () => Promise<unknown>) {
  const wall: number[] = [];
  const cpu: number[] = [];
  let body: unknown;
  for (let i = 0; i < options.runs; i++) {
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    body = await run();
    wall.push(performance.now() - start);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  const sortedWall = [...wall].sort((a, b) => a - b);
  const sortedCpu = [...cpu].sort((a, b) => a - b);
  const json = JSON.stringify(body);
  const hashStart = performance.now();
  for (let i = 0; i < 1000; i++) createHash('sha256').update(json).digest('base64url');
  return {
    wall_ms: {
      p50: round(percentile(sortedWall, 50)),
      p95: round(percentile(sortedWall, 95)),
      max: round(sortedWall.at(-1) ?? 0),
    },
    cpu_ms: { p50: round(percentile(sortedCpu, 50)), p95: round(percentile(sortedCpu, 95)) },
    body_bytes: json.length,
    etag_hash_us: round(((performance.now() - hashStart) / 1000) * 1000),
  };
}
const round = (n: number) => Math.round(n * 100) / 100;

const dir = mkdtempSync(join(tmpdir(), 'tally-bench-realtime-'));
try {
  const warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  const now = Date.now();
  const records = seedRecords(now);
  const seedStart = performance.now();
  for (let i = 0; i < records.length; i += 5000) {
    await refreshVisits(warehouse, new Map([[PROJECT, records.slice(i, i + 5000)]]));
    process.stderr.write(`seeded ${Math.min(i + 5000, records.length)} of ${records.length}\n`);
  }
  const seedMs = performance.now() - seedStart;
  const [counts] = await warehouse.query<{ visits: number; recent: number }>(
    `SELECT count() AS visits,
            sum(arrayCount(t -> t >= now64(3) - toIntervalMinute(30), pageview_times)) AS recent
     FROM visits FINAL WHERE project_id = {p:String}`,
    { p: PROJECT },
  );
  const filters = parseFilters('country==DE|US;page==/pricing');
  // One call first, so that the figures measured are the warm ones a poller sees.
  await trafficRealtimeReport(warehouse, { project: PROJECT, filters: [] });
  const plain = await measure(() => trafficRealtimeReport(warehouse, { project: PROJECT, filters: [] }));
  const filtered = await measure(() => trafficRealtimeReport(warehouse, { project: PROJECT, filters }));
  await warehouse.close();
  console.log(
    JSON.stringify(
      {
        benchmark: 'realtime',
        options,
        seeded: {
          records: records.length,
          visits: Number(counts?.visits ?? 0),
          pageviews_last_30_min: Number(counts?.recent ?? 0),
          seed_s: round(seedMs / 1000),
        },
        realtime: plain,
        realtime_filtered: filtered,
        machine: machineInfo(),
        load: loadSnapshot([process.pid]),
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
