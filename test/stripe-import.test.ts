// `tally import stripe` end to end, for the content: a local fake of Stripe's list endpoints (Node http)
// serves a known history, two objects a page, and the command line imports it into a data directory's
// embedded record log; the real revenue consumer lands it into real chDB, and the MRR report must equal the
// table the history is known to have. Run again, and with a webhook of an imported invoice, nothing doubles;
// an interrupted run continues from its checkpoint; a dry run lands nothing. (The client's request shapes are
// checked against stripe-mock in packages/cli/src/import-stripe.mock.test.ts.)
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedLogDir, openEmbeddedLog } from '@tally/log';
import { revenueMrrReport } from '@tally/reports/queries';
import { revenueFromStripeEvent } from '@tally/revenue';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { runCli } from '../packages/cli/src/cli.ts';
import { readStripeKey } from '../packages/cli/src/import-stripe.ts';
import { startRevenueConsumer } from '../services/revenue-consumer/src/consumer.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-stripe-import-'));
const at = (iso: string) => Date.parse(iso) / 1000;
const price = (id: string, amount: number, interval: 'month' | 'year') => ({
  id,
  object: 'price',
  nickname: id,
  unit_amount: amount,
  recurring: { interval, interval_count: 1 },
});
const BASIC = price('basic', 1000, 'month');
const PRO = price('pro', 5000, 'month');
const MONTHLY = price('monthly30', 3000, 'month');
const YEARLY = price('yearly1200', 120000, 'year');

const line = (amount: number, p: ReturnType<typeof price>, proration = false) => ({
  object: 'line_item',
  amount,
  type: 'subscription',
  proration,
  quantity: 1,
  price: p,
});
const invoice = (
  id: string,
  customer: string,
  subscription: string,
  reason: string,
  paid: string,
  lines: ReturnType<typeof line>[],
) => {
  const total = lines.reduce((sum, l) => sum + l.amount, 0);
  return {
    id,
    object: 'invoice',
    customer,
    subscription,
    currency: 'usd',
    billing_reason: reason,
    status: 'paid',
    amount_paid: Math.max(total, 0),
    total,
    created: at(paid),
    status_transitions: { paid_at: at(paid) },
    metadata: {},
    lines: { object: 'list', data: lines },
  };
};
const subscription = (id: string, customer: string, p: ReturnType<typeof price>, ended?: string) => ({
  id,
  object: 'subscription',
  customer,
  currency: 'usd',
  status: ended ? 'canceled' : 'active',
  ended_at: ended ? at(ended) : null,
  canceled_at: ended ? at(ended) : null,
  trial_end: null,
  metadata: {},
  items: { object: 'list', data: [{ id: `si_${id}`, object: 'subscription_item', price: p, quantity: 1 }] },
});

// The history: M pays 30 a month, Y 1,200 a year (100 a month), U starts at 10 a month, upgrades to 50 on
// 15 February (the proration invoice credits the unused basic time and charges the pro) and ends on
// 25 March; M's February payment is refunded.
const LISTS: Record<string, Array<{ id: string; [key: string]: unknown }>> = {
  customers: [
    { id: 'cus_m', object: 'customer', name: 'Mona Monthly', email: 'mona@example.com' },
    { id: 'cus_y', object: 'customer', name: 'Yann Yearly', email: null },
    { id: 'cus_u', object: 'customer', name: null, email: 'u@example.com' },
  ],
  subscriptions: [
    subscription('sub_m', 'cus_m', MONTHLY),
    subscription('sub_y', 'cus_y', YEARLY),
    subscription('sub_u', 'cus_u', PRO, '2026-03-25T00:00:00Z'),
  ],
  invoices: [
    invoice('in_u1', 'cus_u', 'sub_u', 'subscription_create', '2026-01-05T10:00:00Z', [line(1000, BASIC)]),
    invoice('in_m1', 'cus_m', 'sub_m', 'subscription_create', '2026-01-10T10:00:00Z', [line(3000, MONTHLY)]),
    invoice('in_y1', 'cus_y', 'sub_y', 'subscription_create', '2026-01-20T10:00:00Z', [line(120000, YEARLY)]),
    invoice('in_m2', 'cus_m', 'sub_m', 'subscription_cycle', '2026-02-10T10:00:00Z', [line(3000, MONTHLY)]),
    invoice('in_u2', 'cus_u', 'sub_u', 'subscription_update', '2026-02-15T10:00:00Z', [
      line(-500, BASIC, true),
      line(2500, PRO, true),
    ]),
    invoice('in_m3', 'cus_m', 'sub_m', 'subscription_cycle', '2026-03-10T10:00:00Z', [line(3000, MONTHLY)]),
  ],
  refunds: [
    {
      id: 're_m2',
      object: 'refund',
      amount: 3000,
      currency: 'usd',
      status: 'succeeded',
      created: at('2026-02-12T09:00:00Z'),
      charge: {
        id: 'ch_m2',
        object: 'charge',
        customer: 'cus_m',
        currency: 'usd',
        amount: 3000,
        amount_refunded: 3000,
        metadata: {},
      },
    },
  ],
};
// The MRR table the history has (USD): January's new business 10 + 30 + 100; February U's expansion 40;
// March U's churn of 50. Cash: January 10 + 30 + 1,200; February 30 + 20 − 30; March 30.
const KNOWN = [
  { month: '2026-01', mrr_start: '0', new: '140', expansion: '0', churn: '0', mrr_end: '140', cash: '1240' },
  { month: '2026-02', mrr_start: '140', new: '0', expansion: '40', churn: '0', mrr_end: '180', cash: '20' },
  { month: '2026-03', mrr_start: '180', new: '0', expansion: '0', churn: '50', mrr_end: '130', cash: '30' },
];
const RECORDS = 8; // 6 paid invoices, U's end, the refund

const requests: string[] = [];
let failInvoicesAfter: string | undefined;
let server: Server;
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    const list = LISTS[url.pathname.replace('/v1/', '')];
    const after = url.searchParams.get('starting_after');
    res.setHeader('content-type', 'application/json');
    if (!list || req.headers.authorization !== 'Bearer sk_test_fake') {
      res.writeHead(list ? 401 : 404).end(JSON.stringify({ error: { type: 'invalid_request_error' } }));
      return;
    }
    if (url.pathname === '/v1/invoices' && failInvoicesAfter !== undefined && after === failInvoicesAfter) {
      res.setHeader('stripe-should-retry', 'false');
      res.writeHead(503).end(JSON.stringify({ error: { type: 'api_error', message: 'the fake is down' } }));
      return;
    }
    const start = after ? list.findIndex((o) => o.id === after) + 1 : 0;
    const data = list.slice(start, start + 2); // two a page, whatever the limit: paging must follow has_more
    res.end(JSON.stringify({ object: 'list', url: url.pathname, has_more: start + 2 < list.length, data }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function tally(argv: string[], env: Record<string, string> = {}) {
  vi.stubEnv('TALLY_DATA_DIR', dir);
  vi.stubEnv('TALLY_ENV_FILE', '/dev/null');
  vi.stubEnv('STRIPE_API_BASE', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  vi.stubEnv('STRIPE_SECRET_KEY', 'sk_test_fake');
  for (const name of ['REDIS_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'CLICKHOUSE_URL'])
    vi.stubEnv(name, '');
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    return { code: await runCli(['import', 'stripe', ...argv]), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    vi.unstubAllEnvs();
  }
}

it('refuses the key as an argument, and reads it from STRIPE_SECRET_KEY or stdin', async () => {
  for (const argv of [
    ['--project', 'shop', '--key', 'sk_test_fake'],
    ['--project', 'shop', '--api-key=sk_test_fake'],
    ['--project', 'shop', 'sk_test_fake'],
  ]) {
    const run = await tally(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('never taken as an argument');
  }
  expect(requests).toEqual([]);
  expect(readStripeKey({ STRIPE_SECRET_KEY: ' sk_test_env\n' })).toBe('sk_test_env');
  const file = join(dir, 'key.txt');
  writeFileSync(file, 'sk_test_stdin\n');
  const fd = openSync(file, 'r');
  try {
    expect(readStripeKey({}, fd, false)).toBe('sk_test_stdin');
  } finally {
    closeSync(fd);
  }
  expect(() => readStripeKey({}, 0, true)).toThrow(/STRIPE_SECRET_KEY/);
});

it('prints what a dry run would import and lands nothing', async () => {
  const run = await tally(['--project', 'shop', '--dry-run']);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(
    `would import ${RECORDS} revenue record(s) into shop (1 churn, 1 refund, 2 renewal, 3 subscription, 1 upgrade)`,
  );
  // Progress, a line per page when stderr is not a terminal, with the counts read.
  expect(run.stderr).toContain('stripe: 3 customers, 3 subscriptions, 6 invoices, 1 refunds read; 8 records');
  expect(existsSync(embeddedLogDir(dir))).toBe(false);
  expect(existsSync(join(dir, 'stripe-import'))).toBe(false);
});

it('imports the history once, resumes an interrupted run, and matches the known MRR table', async () => {
  // Interrupted: the fake fails on the second page of invoices.
  requests.length = 0;
  failInvoicesAfter = 'in_m1';
  const first = await tally(['--project', 'shop']);
  expect(first.code).toBe(1);
  expect(first.stderr).toContain('run it again to continue where it stopped');
  const checkpointPath = join(dir, 'stripe-import', 'shop.json');
  expect(JSON.parse(readFileSync(checkpointPath, 'utf8'))).toEqual({
    subscriptions: { after: 'sub_u', done: true },
    invoices: { after: 'in_m1', done: false },
  });

  // The second run reads the customers again (their names), then continues after in_m1.
  requests.length = 0;
  failInvoicesAfter = undefined;
  const second = await tally(['--project', 'shop']);
  expect(second.code).toBe(0);
  expect(second.stderr).toContain('continuing the import interrupted earlier');
  expect(requests.filter((r) => !r.includes('/v1/customers'))).toEqual([
    'GET /v1/invoices?limit=100&starting_after=in_m1&status=paid',
    'GET /v1/invoices?limit=100&starting_after=in_m2&status=paid',
    'GET /v1/refunds?limit=100&expand[0]=data.charge&expand[1]=data.charge.refunds',
  ]);
  expect(existsSync(checkpointPath)).toBe(false);

  // A full re-run lands everything again: nothing doubles.
  expect((await tally(['--project', 'shop'])).code).toBe(0);

  const warehouse: Warehouse = await openChdbWarehouse({ dataDir: join(dir, 'wh'), database: 'tally' });
  await migrate(warehouse);
  const log = openEmbeddedLog({ path: embeddedLogDir(dir) });
  // Webhooks of what was already imported: their own record ids (from the event id), the same transaction ids.
  const webhook = revenueFromStripeEvent({
    id: 'evt_in_m1',
    type: 'invoice.paid',
    created: at('2026-01-10T10:00:05Z'),
    data: { object: LISTS.invoices?.[1] },
  });
  if (!webhook.ok) throw new Error(webhook.ignored);
  // And the webhook of U's end: its churn shares the transaction id `sub_u:ended` with the imported one.
  const churnWebhook = revenueFromStripeEvent({
    id: 'evt_sub_u_deleted',
    type: 'customer.subscription.deleted',
    created: at('2026-03-25T00:00:02Z'),
    data: { object: LISTS.subscriptions?.[2] },
  });
  if (!churnWebhook.ok) throw new Error(churnWebhook.ignored);
  // And the webhook of M's refund as API versions from 2022-11-15 send it (no refunds listed on the
  // charge): its transaction id, the charge with its refunded total, is the one the import derived.
  const refund = LISTS.refunds?.[0] as unknown as { charge: Record<string, unknown> };
  const refundWebhook = revenueFromStripeEvent({
    id: 'evt_ch_m2_refunded',
    type: 'charge.refunded',
    created: at('2026-02-12T09:00:01Z'),
    data: { object: refund.charge, previous_attributes: { amount_refunded: 0 } },
  });
  if (!refundWebhook.ok) throw new Error(refundWebhook.ignored);
  expect(refundWebhook.record.transaction_id).toBe('ch_m2:refunded:3000');
  const when = webhook.record.timestamp as number;
  const envelope = (id: string, project: string, data: typeof webhook.record) => ({
    id,
    type: 'revenue' as const,
    project_id: project,
    received_at: Date.now(),
    timestamp: when,
    client_timestamp: when,
    timestamp_clamped: false,
    user_agent: null,
    visitor_fingerprint_derived: false,
    country: null,
    data,
  });
  // After it, a record of another project: once that one is stored, the webhook's was read before it.
  await log.append([
    envelope(webhook.id, 'shop', webhook.record),
    envelope(churnWebhook.id, 'shop', churnWebhook.record),
    envelope(refundWebhook.id, 'shop', refundWebhook.record),
    envelope('00000000-0000-4000-8000-000000000001', 'sentinel', webhook.record),
  ]);
  const consumer = startRevenueConsumer({ log, warehouse, batch: { maxRecords: 4, maxWaitMs: 50 } });
  const count = async (sql: string) => (await warehouse.query<{ n: number }>(sql))[0]?.n;
  try {
    await vi.waitFor(
      async () =>
        expect(await count("SELECT count() AS n FROM revenue WHERE project_id = 'sentinel'")).toBe(1),
      { timeout: 20_000, interval: 100 },
    );
    expect(await count("SELECT count() AS n FROM revenue WHERE project_id = 'shop'")).toBe(RECORDS);
    const months = (await revenueMrrReport(warehouse, {
      project: 'shop',
      from: '2026-01',
      to: '2026-03',
      filters: [],
    })) as Array<Record<string, unknown>>;
    expect(
      months.map((m) => ({
        month: m.month,
        mrr_start: String(m.mrr_start),
        new: String(m.new),
        expansion: String(m.expansion),
        churn: String(m.churn),
        mrr_end: String(m.mrr_end),
        cash: String(m.cash_revenue),
      })),
    ).toEqual(KNOWN);
    const names = await warehouse.query<{ customer_id: string; email: string }>(
      "SELECT DISTINCT customer_id, metadata['email'] AS email FROM revenue WHERE project_id = 'shop' AND customer_id = 'cus_m'",
    );
    expect(names).toEqual([{ customer_id: 'cus_m', email: 'mona@example.com' }]);
  } finally {
    await consumer.stop();
    await log.close();
    await warehouse.close();
  }
});
