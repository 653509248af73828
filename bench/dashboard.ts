// Dashboard benchmark (`npm run bench:dashboard`): seeds one project with `--records` records (10 million by
// default) over `--days` days (90) into an embedded chDB warehouse, in the realistic mix of bench/ (70%
// pageview, 20% event, 5% identify, 5% revenue; the pages, referrers, campaigns, events and browsers of
// bench/lib/workload.ts), builds the visits table with the analytics consumer's own backfill (the fold of
// @tally/reports traffic/visits.ts over every visitor's records), then measures every query of the
// dashboard's read API for the last 30 days, without and with a filter: p50 and p95 per panel over `--runs`
// runs, and the whole page's data (every panel one after the other, and all at once; and what a page shows at
// first), with the CPU time each took (the engine runs in this process). Then the revenue views (issue 11):
// `--customers` customers (50,000) with a year of revenue history each (subscription, monthly renewals,
// upgrades, downgrades, churn and returns) and an identify record linking each to a seeded visitor, the
// mrr_movements table built as the revenue consumer builds it, and every revenue panel and query measured
// the same way: warm, unwarmed (the cache dropped), the first request after the caches were warmed as the
// dashboard warms them at start (and that warming), and after new revenue landed (10 records before each run,
// taken out again at the end). Prints one JSON object on stdout; progress on stderr. Never a timed test. With --keep, an
// existing directory's data is reused (no seeding).
//
//   node --import tsx bench/dashboard.ts [--records 10000000] [--days 90] [--runs 10] [--customers 50000] [--keep <dir>]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestionHealth } from '@tally/reports/ingestion-health';
import {
  acquisitionFunnel,
  customerListPage,
  forgetCustomerTouches,
  forgetRevenueHistory,
  monthlyRevenue,
  readCustomerRecords,
  readCustomerTouches,
  readCustomerTouchesCached,
  readMrrInputs,
  readMrrInputsCached,
  readStoredMovements,
  readVisitTimeline,
  reconcile,
  revenueAttribution,
  revenueDrilldown,
  warmRevenue,
} from '@tally/reports/revenue';
import { backfillMrrMovements, backfillVisits } from '@tally/reports/tables';
import {
  comparisonRange,
  currentVisitors,
  funnelSteps,
  goalConversions,
  parseFilters,
  type TrafficQuery,
  trafficBreakdown,
  trafficFiguresOfPeriods,
  trafficTimeseries,
} from '@tally/reports/traffic';
import { migrate, openChdbWarehouse, type Row, type Warehouse } from '@tally/warehouse';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { parseArgs } from './lib/report.ts';
import { CAMPAIGNS, EVENTS, PAGES, REFERRERS } from './lib/workload.ts';

const options = parseArgs(
  { records: 10_000_000, days: 90, runs: 10, customers: 50_000, keep: '' },
  process.argv.slice(2),
);
const log = (message: string) => process.stderr.write(`[bench:dashboard] ${message}\n`);
const PROJECT = 'bench';

/** p50 and p95 (nearest rank) and the maximum of a list of milliseconds, rounded to 0.1 ms. */
function percentiles(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  const round = (v: number) => Math.round(v * 10) / 10;
  return { p50: round(rank(50)), p95: round(rank(95)), max: round(sorted.at(-1) ?? 0), runs: sorted.length };
}

/**
 * CPU time of this process (chDB's threads included: the engine runs in it) in ms. On a machine shared
 * with other work, wall times depend on the others' load; the CPU a query takes much less so.
 */
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

/** mulberry32: the same seed seeds the same data. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = random(10);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
const uuid = () => `${hex(8)}-${hex(4)}-7${hex(3)}-8${hex(3)}-${hex(12)}`;

const AGENTS = [
  ['Chrome', 'Windows', 'desktop', 1920],
  ['Safari', 'macOS', 'desktop', 1512],
  ['Safari', 'iOS', 'mobile', 390],
  ['Chrome', 'Android', 'mobile', 412],
  ['Firefox', 'Windows', 'desktop', 1366],
  ['Microsoft Edge', 'macOS', 'desktop', 1440],
  ['Chrome', 'Linux', 'desktop', 2560],
  ['Safari', 'iOS', 'tablet', 820],
] as const;
const COUNTRIES = ['US', 'US', 'US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP', 'NL', 'CA', ''];
const REFERRER_SOURCES: Record<string, [string, string]> = {
  'https://www.google.com/': ['Google', 'search'],
  'https://news.ycombinator.com/item?id=40123456': ['Hacker News', 'social'],
  'https://t.co/Ab12Cd34Ef': ['Twitter', 'social'],
  'https://www.bing.com/search?q=self+hosted+analytics': ['Bing', 'search'],
  'https://github.com/tally/tally': ['GitHub', 'social'],
};

/** Rows of events (and identities, revenue) for one visit of one visitor starting at `start`. */
function visit(
  visitor: string,
  start: number,
  rows: { events: Row[]; identities: Row[]; revenue: Row[] },
): number {
  const [browser, os, device, width] = pick(AGENTS);
  const country = pick(COUNTRIES);
  const referrer = pick(REFERRERS);
  const campaign = pick(CAMPAIGNS);
  const [source, medium] = referrer ? (REFERRER_SOURCES[referrer] ?? ['', '']) : ['', ''];
  // Records in the mix: 70 pageviews : 20 events : 5 identify : 5 revenue; about 5 per visit.
  const count = 1 + Math.floor(-Math.log(1 - rand()) * 4);
  let t = start;
  let written = 0;
  for (let i = 0; i < count; i++) {
    const r = i === 0 ? 0 : rand();
    const [path] = pick(PAGES);
    const common = {
      project_id: PROJECT,
      id: uuid(),
      timestamp: t,
      received_at: t,
      visitor_id: visitor,
      session_id: visitor,
      hostname: 'bench.example.com',
      url: `https://bench.example.com${path}`,
      path,
      referrer: i === 0 ? (referrer ?? '') : '',
      referrer_source: i === 0 ? source : '',
      referrer_medium: i === 0 ? medium : '',
      utm_source: i === 0 ? (campaign?.[0] ?? '') : '',
      utm_medium: i === 0 ? (campaign?.[1] ?? '') : '',
      utm_campaign: i === 0 ? (campaign?.[2] ?? '') : '',
      country,
      browser,
      os,
      device_type: device,
      user_agent: 'bench',
    };
    if (r < 0.7) rows.events.push({ ...common, type: 'pageview', screen_width: width });
    else if (r < 0.9) {
      const [name, data] = pick(EVENTS);
      const eventData = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v)]));
      rows.events.push({ ...common, type: 'event', event_name: name, event_data: eventData });
    } else if (r < 0.95) {
      rows.identities.push({
        project_id: PROJECT,
        id: common.id,
        timestamp: t,
        received_at: t,
        visitor_id: visitor,
        session_id: visitor,
        customer_id: `cus_${visitor}`,
      });
    } else {
      rows.revenue.push({
        project_id: PROJECT,
        transaction_id: `in_${common.id}`,
        id: common.id,
        timestamp: t,
        received_at: t,
        customer_id: `cus_${visitor}`,
        visitor_id: visitor,
        session_id: visitor,
        event_type: 'renewal',
        amount: '49',
        currency: 'USD',
        payload: '{}',
      });
    }
    written++;
    t += 5_000 + Math.floor(rand() * 300_000);
  }
  return written;
}

async function seed(warehouse: Warehouse, end: number): Promise<void> {
  const start = end - options.days * 86_400_000;
  const visitors = Math.max(1000, Math.round(options.records / 12));
  let written = 0;
  let rows = { events: [] as Row[], identities: [] as Row[], revenue: [] as Row[] };
  const flush = async () => {
    await warehouse.insert('events', rows.events);
    await warehouse.insert('identities', rows.identities);
    await warehouse.insert('revenue', rows.revenue);
    rows = { events: [], identities: [], revenue: [] };
  };
  const started = performance.now();
  while (written < options.records) {
    // Visits in time order, as traffic comes; a visitor returns on other days (or later the same day).
    const at = start + Math.floor((written / options.records) * (end - start - 3_600_000));
    written += visit(`fp_${Math.floor(rand() * visitors)}`, at, rows);
    if (rows.events.length >= 100_000) {
      await flush();
      log(`seeded ${written} records (${Math.round(written / ((performance.now() - started) / 1000))}/s)`);
    }
  }
  await flush();
}

const PLANS = ['19', '49', '99', '249'];

/**
 * `--customers` customers, each linked by an identify record to one of the seeded visitors, with a year of
 * monthly revenue before `end`: a subscription, renewals, and now and then an upgrade, a downgrade, a churn
 * and a return. Rows as the revenue consumer writes them (money as decimal text).
 */
async function seedCustomers(warehouse: Warehouse, end: number): Promise<void> {
  const visitors = Math.max(1000, Math.round(options.records / 12));
  const yearStart = end - 365 * 86_400_000;
  let revenue: Row[] = [];
  let identities: Row[] = [];
  const flush = async () => {
    await warehouse.insert('revenue', revenue);
    await warehouse.insert('identities', identities);
    revenue = [];
    identities = [];
  };
  for (let c = 0; c < options.customers; c++) {
    const customer = `cust_${c}`;
    const visitor = `fp_${Math.floor(rand() * visitors)}`;
    let t = yearStart + Math.floor(rand() * 330 * 86_400_000);
    identities.push({
      project_id: PROJECT,
      id: uuid(),
      timestamp: t - 60_000,
      received_at: t - 60_000,
      visitor_id: visitor,
      session_id: visitor,
      customer_id: customer,
    });
    let mrr = Number(pick(PLANS));
    let n = 0;
    const record = (event_type: string, amount: number, impact: number | null) => {
      revenue.push({
        project_id: PROJECT,
        transaction_id: `${customer}_${n++}`,
        id: uuid(),
        timestamp: t,
        received_at: t,
        customer_id: customer,
        visitor_id: visitor,
        session_id: visitor,
        event_type,
        amount: String(amount),
        currency: 'USD',
        mrr_impact: impact === null ? null : String(impact),
        is_recurring: event_type !== 'purchase',
        payment_processor: 'stripe',
        metadata: { plan: `plan_${mrr}` },
        payload: '{}',
      });
    };
    record('subscription', mrr, mrr);
    let active = true;
    for (t += 30 * 86_400_000; t < end; t += 30 * 86_400_000) {
      const r = rand();
      if (!active) {
        if (r < 0.1) {
          mrr = Number(pick(PLANS));
          record('subscription', mrr, mrr);
          active = true;
        }
      } else if (r < 0.04) {
        record('churn', 0, -mrr);
        active = false;
      } else if (r < 0.12) {
        const next = mrr * 2;
        record('upgrade', next - mrr, next - mrr);
        mrr = next;
      } else if (r < 0.16 && mrr > 19) {
        const next = Math.round(mrr / 2);
        record('downgrade', next, next - mrr);
        mrr = next;
      } else {
        record('renewal', mrr, 0);
      }
    }
    if (rand() < 0.05) record('purchase', 500, null);
    if (revenue.length >= 100_000) {
      await flush();
      log(`seeded ${c + 1} customers`);
    }
  }
  await flush();
  log("building mrr_movements (the revenue consumer's backfill)");
  await backfillMrrMovements(warehouse);
}

/** The revenue page's default: the 12 months to the data's last (USD), as the dashboard warms it. */
function revenueRange(end: number) {
  const to = new Date(end - 86_400_000).toISOString().slice(0, 7);
  const [y, m] = to.split('-').map(Number) as [number, number];
  const from = new Date(Date.UTC(y, m - 12, 1)).toISOString().slice(0, 7);
  return { project: PROJECT, currency: 'USD', from, to };
}

/** The revenue views' queries, as the API runs them for the last 12 months (USD). */
function revenuePanels(end: number): Array<{ name: string; run(): Promise<unknown> }> {
  const { from, to } = revenueRange(end);
  const [y, m] = to.split('-').map(Number) as [number, number];
  const until = Date.UTC(y, m, 1);
  const currency = 'USD';
  const w = () => warehouse();
  const withTouches = async (by: 'channel' | 'utm_campaign', touch: 'first' | 'last') => {
    const [records, touches] = await Promise.all([
      readMrrInputsCached(w(), { project: PROJECT, until, currency }),
      readCustomerTouchesCached(w(), PROJECT),
    ]);
    return revenueAttribution(records, { from, to, currency, by, touch, touches });
  };
  return [
    {
      name: 'revenue mrr (12 months)',
      run: async () =>
        monthlyRevenue(await readMrrInputsCached(w(), { project: PROJECT, until, currency }), from, to, [
          currency,
        ]),
    },
    { name: 'revenue attribution first-touch channel', run: () => withTouches('channel', 'first') },
    { name: 'revenue attribution last-touch campaign', run: () => withTouches('utm_campaign', 'last') },
    {
      name: 'revenue reconciliation (a month)',
      run: async () => {
        const [records, stored] = await Promise.all([
          readMrrInputsCached(w(), { project: PROJECT, until, currency }),
          readStoredMovements(w(), { project: PROJECT, month: to, currency }),
        ]);
        return reconcile(records, { month: to, currency, stored });
      },
    },
    {
      name: 'revenue records (drill-down of new, 12 months, the first 200 as the page lists them)',
      run: async () =>
        revenueDrilldown(await readMrrInputsCached(w(), { project: PROJECT, until, currency }), {
          figure: 'new',
          from,
          to,
          currency,
          limit: 200,
        }),
    },
    {
      name: 'revenue funnel (30 days, channel)',
      run: async () =>
        acquisitionFunnel(w(), await readMrrInputsCached(w(), { project: PROJECT, currency }), {
          project: PROJECT,
          from: '2026-04-20',
          to: '2026-05-19',
          by: 'channel',
          currency,
        }),
    },
    {
      name: 'revenue customers (list)',
      run: async () => {
        const records = await readMrrInputsCached(w(), { project: PROJECT, currency });
        return customerListPage(w(), records, { project: PROJECT, currency, offset: 0, limit: 50 });
      },
    },
    {
      name: 'revenue customer page',
      run: () =>
        Promise.all([
          readMrrInputs(w(), { project: PROJECT, customers: ['cust_7'] }),
          readCustomerTouches(w(), PROJECT, ['cust_7']),
          readCustomerRecords(w(), PROJECT, 'cust_7'),
          readVisitTimeline(w(), PROJECT, 'cust_7'),
        ]),
    },
    { name: 'health', run: () => ingestionHealth(w(), { project: PROJECT, now: end }) },
  ];
}

interface Panel {
  name: string;
  run(query: TrafficQuery): Promise<unknown>;
}

const PANELS: Panel[] = [
  {
    name: 'summary (with previous period)',
    // As the API answers it: the range and the previous period in one pass.
    run: (q) => trafficFiguresOfPeriods(warehouse(), q, [q, comparisonRange(q.from, q.to, 'previous')]),
  },
  { name: 'current visitors', run: (q) => currentVisitors(warehouse(), q) },
  { name: 'timeseries day', run: (q) => trafficTimeseries(warehouse(), q, 'day') },
  ...(
    [
      'page',
      'entry_page',
      'exit_page',
      'channel',
      'source',
      'referrer',
      'utm_source',
      'utm_medium',
      'utm_campaign',
      'country',
      'browser',
      'os',
      'device',
      'screen_size',
      'event_name',
    ] as const
  ).map((dimension) => ({
    name: `breakdown ${dimension}`,
    run: (q: TrafficQuery) => trafficBreakdown(warehouse(), q, { dimension, limit: 10 }),
  })),
  {
    name: 'breakdown event_property plan',
    run: (q) =>
      trafficBreakdown(warehouse(), q, { dimension: 'event_property', property: 'plan', limit: 10 }),
  },
  {
    name: 'goals (2)',
    run: (q) => goalConversions(warehouse(), q, [{ event_name: 'signup_clicked' }, { path: '/blog/*' }]),
  },
  {
    name: 'funnel (3 steps)',
    run: (q) =>
      funnelSteps(warehouse(), q, [{ path: '/' }, { path: '/pricing' }, { event_name: 'checkout_started' }]),
  },
];

/**
 * What a dashboard page loads at first, as Plausible's does: the top figures, current visitors, the time
 * series, and the first tab of each card (sources: channels; pages; locations: countries; devices:
 * browsers; custom events; goals). The other breakdowns load when their tab is opened.
 */
const FIRST_VIEW = [
  'summary (with previous period)',
  'current visitors',
  'timeseries day',
  'breakdown channel',
  'breakdown page',
  'breakdown country',
  'breakdown browser',
  'breakdown event_name',
  'goals (2)',
];

let opened: Warehouse | null = null;
const warehouse = () => opened as Warehouse;

async function main(): Promise<void> {
  const dir = options.keep || mkdtempSync(join(tmpdir(), 'tally-bench-dashboard-'));
  opened = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  const end = Date.parse('2026-05-20T00:00:00Z');
  const [existing] = await (async () => {
    await migrate(warehouse());
    return warehouse().query<{ n: number }>('SELECT count() AS n FROM events');
  })();
  let seedSeconds = 0;
  let visitsSeconds = 0;
  if ((existing?.n ?? 0) === 0) {
    let t = performance.now();
    await seed(warehouse(), end);
    seedSeconds = (performance.now() - t) / 1000;
    log("building the visits table (the analytics consumer's backfill)");
    t = performance.now();
    await backfillVisits(warehouse(), 64);
    visitsSeconds = (performance.now() - t) / 1000;
  }
  let customersSeconds = 0;
  const [stored] = await warehouse().query<{ n: number }>(
    "SELECT uniqExact(customer_id) AS n FROM revenue WHERE customer_id LIKE 'cust\\_%'",
  );
  if (Number(stored?.n ?? 0) === 0 && options.customers > 0) {
    const t = performance.now();
    await seedCustomers(warehouse(), end);
    customersSeconds = (performance.now() - t) / 1000;
  }
  const [counts] = await warehouse().query<Record<string, number>>(
    `SELECT (SELECT count() FROM events) AS events, (SELECT count() FROM identities) AS identities,
            (SELECT count() FROM revenue) AS revenue, (SELECT count() FROM visits FINAL) AS visits,
            (SELECT uniqExact(customer_id) FROM revenue) AS customers,
            (SELECT count() FROM mrr_movements FINAL) AS mrr_movements`,
  );
  log(`data: ${JSON.stringify(counts)}`);
  await warehouse()
    .command('OPTIMIZE TABLE visits FINAL')
    .catch(() => {});

  const base: TrafficQuery = {
    project: PROJECT,
    from: '2026-04-20',
    to: '2026-05-19',
    timeZone: 'UTC',
    filters: [],
  };
  const variants = {
    'no filter': base,
    'filter country==DE;page==/pricing': { ...base, filters: parseFilters('country==DE;page==/pricing') },
  };
  const results: Record<string, unknown> = {};
  const load: Record<string, unknown> = { beforeMeasuring: loadSnapshot([process.pid]) };
  for (const [variant, query] of Object.entries(variants)) {
    const panels: Record<string, unknown> = {};
    for (const panel of PANELS) {
      await panel.run(query); // warm
      const times: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < options.runs; i++) {
        const t = performance.now();
        const c = process.cpuUsage();
        await panel.run(query);
        times.push(performance.now() - t);
        cpu.push(cpuMs(process.cpuUsage(c)));
      }
      panels[panel.name] = { ...percentiles(times), cpuMs: percentiles(cpu) };
      log(`${variant} / ${panel.name}: ${JSON.stringify(panels[panel.name])}`);
    }
    const sequential: number[] = [];
    const sequentialCpu: number[] = [];
    const parallel: number[] = [];
    const firstView: number[] = [];
    const shown = PANELS.filter((p) => FIRST_VIEW.includes(p.name));
    for (let i = 0; i < Math.max(3, Math.ceil(options.runs / 2)); i++) {
      let t = performance.now();
      const c = process.cpuUsage();
      for (const panel of PANELS) await panel.run(query);
      sequential.push(performance.now() - t);
      sequentialCpu.push(cpuMs(process.cpuUsage(c)));
      t = performance.now();
      await Promise.all(PANELS.map((p) => p.run(query)));
      parallel.push(performance.now() - t);
      t = performance.now();
      await Promise.all(shown.map((p) => p.run(query)));
      firstView.push(performance.now() - t);
    }
    results[variant] = {
      panels,
      wholePageSequentialMs: percentiles(sequential),
      wholePageSequentialCpuMs: percentiles(sequentialCpu),
      wholePageConcurrentMs: percentiles(parallel),
      firstViewMs: percentiles(firstView),
    };
  }
  const revenue: Record<string, unknown> = {};
  // New revenue, as a live site gets it all the time: a few records of existing customers (renewals and
  // an upgrade, dated in the last weeks) landed before a request, so that the cached history is stale.
  let landed = 0;
  const landNewRevenue = async () => {
    const rows: Row[] = [];
    for (let i = 0; i < 10; i++) {
      const customer = `cust_${Math.floor(rand() * options.customers)}`;
      const t = end - Math.floor(rand() * 20 * 86_400_000);
      const upgrade = i === 0;
      rows.push({
        project_id: PROJECT,
        transaction_id: `bench_new_${landed++}`,
        id: uuid(),
        timestamp: t,
        received_at: Date.now(),
        customer_id: customer,
        visitor_id: '',
        session_id: '',
        event_type: upgrade ? 'upgrade' : 'renewal',
        amount: upgrade ? '30' : '49',
        currency: 'USD',
        mrr_impact: upgrade ? '30' : '0',
        is_recurring: true,
        payment_processor: 'stripe',
        metadata: {},
        payload: '{}',
      });
    }
    await warehouse().insert('revenue', rows);
  };
  for (const panel of revenuePanels(end)) {
    await panel.run(); // warm
    /** Wall and CPU time (this process: the engine's threads included) of `runs` runs, each after `before`. */
    const measure = async (before: () => unknown) => {
      const times: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < options.runs; i++) {
        await before();
        const c = process.cpuUsage();
        const t = performance.now();
        await panel.run();
        times.push(performance.now() - t);
        cpu.push(cpuMs(process.cpuUsage(c)));
      }
      return { ...percentiles(times), cpuMs: percentiles(cpu) };
    };
    const warm = await measure(() => {});
    // Unwarmed: the cache dropped (the first request of a process that has not warmed its caches, or that
    // comes while they warm: the whole history read and folded, every customer's touches read).
    const cold = await measure(() => {
      forgetRevenueHistory(warehouse());
      forgetCustomerTouches(warehouse());
    });
    // The first request after the caches were dropped and warmed as the dashboard warms them at start.
    const firstAfterWarming = await measure(async () => {
      forgetRevenueHistory(warehouse());
      forgetCustomerTouches(warehouse());
      await warmRevenue(warehouse(), revenueRange(end));
    });
    // After new revenue: the cached history refreshed (only the changed part read and folded again).
    const afterNewRevenue = await measure(landNewRevenue);
    revenue[panel.name] = { ...warm, cold, firstAfterWarming, afterNewRevenue };
    log(`${panel.name}: ${JSON.stringify(revenue[panel.name])}`);
  }
  // Warming at start (revenue-warmer.ts): the caches dropped, then warmed.
  const warming: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    forgetRevenueHistory(warehouse());
    forgetCustomerTouches(warehouse());
    const t = performance.now();
    await warmRevenue(warehouse(), revenueRange(end));
    warming.push(performance.now() - t);
  }
  revenue['warming at start'] = percentiles(warming);
  log(`warming at start: ${JSON.stringify(percentiles(warming))}`);
  // A whole revenue page with the cache dropped, and after new revenue landed: every panel at once, as the
  // browser asks, sharing one read of the history.
  const page: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    forgetRevenueHistory(warehouse());
    forgetCustomerTouches(warehouse());
    const t = performance.now();
    await Promise.all(revenuePanels(end).map((panel) => panel.run()));
    page.push(performance.now() - t);
  }
  revenue['every revenue panel at once, cold'] = percentiles(page);
  log(`every revenue panel at once, cold: ${JSON.stringify(percentiles(page))}`);
  const freshPage: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    await Promise.all(revenuePanels(end).map((panel) => panel.run())); // every panel's fold cached
    await landNewRevenue();
    const t = performance.now();
    await Promise.all(revenuePanels(end).map((panel) => panel.run()));
    freshPage.push(performance.now() - t);
  }
  revenue['every revenue panel at once, after new revenue'] = percentiles(freshPage);
  log(`every revenue panel at once, after new revenue: ${JSON.stringify(percentiles(freshPage))}`);
  // The data set is kept (--keep) for the next run: the records landed here are taken out again.
  await warehouse()
    .command(
      "ALTER TABLE revenue DELETE WHERE transaction_id LIKE 'bench\\_new\\_%' SETTINGS mutations_sync = 1",
    )
    .catch((error: unknown) => log(`could not delete the landed records: ${String(error)}`));
  results.revenue = revenue;
  await warehouse().close();
  if (!options.keep) rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    `${JSON.stringify({ machine: machineInfo(), load, options, data: counts, seedSeconds, visitsSeconds, customersSeconds, range: { from: base.from, to: base.to }, results }, null, 2)}\n`,
  );
}

await main();
