// The attribution panels' touches cache (@tally/reports revenue/touches-cache.ts) at a size: seeds
// `--customers` customers (50,000), each with a visitor identified as it, `--visits` visits of that visitor
// and six revenue records, plus as many anonymous visitors' visits, into an embedded chDB warehouse; then
// times, once each (`--runs` for more), the uncached query (readCustomerTouches), a cold cached read, a warm
// one (the probe alone), and the read after one new identify (a new visitor with a visit, identified as an
// existing customer), after an anonymous visitor's visit, and after one revenue record. A small script for
// the cost of the cache's parts, not the dashboard benchmark; prints one JSON object with the load average.
//
//   npm run bench:touches -- [--customers 50000] [--visits 3] [--runs 1]
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  forgetCustomerTouches,
  readCustomerTouches,
  readCustomerTouchesCached,
} from '@tally/reports/revenue';
import { migrate, openChdbWarehouse, type Row, type Warehouse } from '@tally/warehouse';
import { parseArgs } from './lib/report.ts';

const options = parseArgs({ customers: 50_000, visits: 3, runs: 1 }, process.argv.slice(2));
const log = (message: string) => process.stderr.write(`[bench:touches] ${message}\n`);
const PROJECT = 'bench';
const START = Date.UTC(2025, 5, 1);
const DAY = 86_400_000;
const CHANNELS = ['Direct', 'Organic Search', 'Paid Search', 'Email', 'Social', 'Referral'];
let sequence = 0;

const visitRow = (visitor: string, start: number): Row => {
  sequence += 1;
  return {
    project_id: PROJECT,
    visitor_id: visitor,
    start,
    end: start + 60_000,
    pageviews: 1,
    events: 0,
    is_bounce: true,
    duration_ms: 0,
    entry_path: '/pricing',
    exit_path: '/pricing',
    hostname: 'shop.example',
    source: '',
    referrer: '',
    channel: CHANNELS[sequence % CHANNELS.length] as string,
    utm_source: '',
    utm_medium: '',
    utm_campaign: `c${sequence % 7}`,
    utm_term: '',
    utm_content: '',
    country: 'DE',
    browser: 'Safari',
    os: 'macOS',
    device_type: 'desktop',
    screen_size: '',
    pageview_ids: [`pv${sequence}`],
    pageview_times: [start],
    pageview_paths: ['/pricing'],
    event_ids: [],
    event_times: [],
    event_names: [],
    event_data: [],
    version: sequence,
    is_deleted: 0,
  };
};
const identityRow = (visitor: string, customer: string, at: number): Row => ({
  project_id: PROJECT,
  id: randomUUID(),
  timestamp: at,
  received_at: at,
  visitor_id: visitor,
  visitor_id_derived: false,
  session_id: '',
  customer_id: customer,
  user_agent: '',
  extra: '',
});
const revenueRow = (customer: string, at: number): Row => ({
  project_id: PROJECT,
  transaction_id: randomUUID(),
  id: randomUUID(),
  customer_id: customer,
  visitor_id: '',
  session_id: '',
  event_type: 'renewal',
  amount: '49',
  currency: 'USD',
  mrr_impact: '0',
  is_recurring: true,
  payment_processor: 'stripe',
  metadata: {},
  payload: '{}',
  timestamp: at,
  received_at: at,
});

async function seed(warehouse: Warehouse): Promise<void> {
  let visits: Row[] = [];
  let identities: Row[] = [];
  let revenue: Row[] = [];
  const flush = async () => {
    await warehouse.insert('visits', visits);
    await warehouse.insert('identities', identities);
    await warehouse.insert('revenue', revenue);
    visits = [];
    identities = [];
    revenue = [];
  };
  for (let c = 0; c < options.customers; c++) {
    const day = START + (c % 300) * DAY;
    for (let v = 0; v < options.visits; v++) {
      visits.push(visitRow(`v${c}`, day + v * 3_600_000));
      visits.push(visitRow(`anon${c}`, day + v * 3_600_000));
    }
    identities.push(identityRow(`v${c}`, `cust_${c}`, day + DAY));
    for (let r = 0; r < 6; r++) revenue.push(revenueRow(`cust_${c}`, day + (r + 1) * 30 * DAY));
    if (revenue.length >= 60_000) {
      await flush();
      log(`seeded ${c + 1} customers`);
    }
  }
  await flush();
}

async function time(run: () => Promise<unknown>, before: () => Promise<unknown> = async () => {}) {
  const times: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    await before();
    const t = performance.now();
    await run();
    times.push(Math.round((performance.now() - t) * 10) / 10);
  }
  return times;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-touches-'));
  const warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  try {
    await migrate(warehouse);
    log('seeding');
    await seed(warehouse);
    const cached = () => readCustomerTouchesCached(warehouse, PROJECT);
    const result = {
      customers: options.customers,
      visitsPerVisitor: options.visits,
      loadAverageBefore: loadavg()[0],
      uncachedMs: await time(() => readCustomerTouches(warehouse, PROJECT)),
      coldMs: await time(cached, async () => forgetCustomerTouches(warehouse)),
      warmMs: await time(cached, cached),
      afterOneIdentifyMs: await time(cached, async () => {
        const visitor = `new${randomUUID()}`;
        await warehouse.insert('visits', [visitRow(visitor, START)]);
        await warehouse.insert('identities', [
          identityRow(visitor, `cust_${sequence % options.customers}`, START + DAY),
        ]);
      }),
      afterAnonymousVisitMs: await time(cached, () =>
        warehouse.insert('visits', [visitRow(`anon${randomUUID()}`, START)]),
      ),
      afterOneRevenueRecordMs: await time(cached, () =>
        warehouse.insert('revenue', [revenueRow(`cust_${sequence % options.customers}`, START + 400 * DAY)]),
      ),
      loadAverageAfter: loadavg()[0],
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await warehouse.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
