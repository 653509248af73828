// The Stripe webhook example (examples/stripe-webhook) end to end: Stripe-signed deliveries (signed with the
// stripe package's own test-header helper, by the example's send-fixture.ts) reach the example server, which
// sends revenue to a real gateway; a 2xx answer must mean the record is already in the gateway's record log,
// dated by the fact it describes (the invoice's payment), not by its arrival.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { promisify } from 'node:util';
import type { IngestRecord } from '@tally/contract';
import { RevenueClient } from '@tally/revenue';
import { FileTokenStore } from '@tally/tokens';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deliverSigned } from '../examples/stripe-webhook/send-fixture.ts';
import { revenueClientForWebhooks, startWebhookServer } from '../examples/stripe-webhook/server.ts';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.ts';
import {
  type GatewayProcess,
  outputMatching,
  ROOT,
  SOURCE_NODE_ARGS,
  type SpawnedProcess,
  spawnWithOutput,
  startGatewayProcess,
  tempDataDir,
} from './support/processes.ts';
import { openRecordReader, type RecordReader } from './support/record-log.ts';

const WEBHOOK_SECRET = 'whsec_test_5f3c1a9e7d2b4c6a8e0f1d3b5a7c9e1f';
const stripe = new Stripe('sk_unused');
const fixturePath = (name: string) => `${ROOT}packages/revenue/src/fixtures/stripe/${name}.json`;
const fixture = (name: string) => readFileSync(fixturePath(name), 'utf8');

let gateway: GatewayProcess;
let records: RecordReader;
let secret: string;
const servers: Server[] = [];
const proxies: FaultProxy[] = [];
const processes: SpawnedProcess[] = [];

beforeAll(async () => {
  const dataDir = tempDataDir();
  ({ token: secret } = await new FileTokenStore(dataDir).create('sdk-stripe', 'secret'));
  gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir, RATE_LIMIT_PER_HOUR: '100000' });
  records = openRecordReader(dataDir);
});
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  for (const proxy of proxies) await proxy.close();
  for (const child of processes) await child.stop();
  await records?.close();
  await gateway?.stop();
});

async function webhook(revenue: RevenueClient) {
  const started = await startWebhookServer({
    webhookSecret: WEBHOOK_SECRET,
    revenue,
    port: 0,
    host: '127.0.0.1',
    log: () => {},
  });
  servers.push(started.server);
  return started.url;
}

const deliver = (url: string, payload: string, signature?: string) =>
  deliverSigned(url, payload, WEBHOOK_SECRET, signature ? { signature } : {});

const transactionOf = (record: IngestRecord) =>
  record.type === 'revenue' ? record.data.transaction_id : undefined;

it('answers 200 only once the record is durable in Tally, dated when the invoice was paid; a redelivery keeps the record id and the date', async () => {
  const url = await webhook(revenueClientForWebhooks(gateway.url, secret));
  // An invoice paid on 31 January 2026 at 23:41:52 UTC, delivered now (months later) and then again.
  const payload = fixture('invoice.paid.subscription_create');
  const paidAt = Date.parse('2026-01-31T23:41:52Z');
  const response = await deliver(url, payload);
  expect(response.status).toBe(200);
  const { id } = (await response.json()) as { id: string };

  // No waiting: a 200 means the gateway had already answered 202, which it does once the record is durable.
  const landed = (await records.all()).filter((r) => r.id === id);
  expect(landed).toHaveLength(1);
  expect(landed[0]?.data).toMatchObject({
    customer_id: 'user_1042',
    amount: 49,
    currency: 'USD',
    event_type: 'subscription',
    transaction_id: 'in_1QeYk0LkdIwHu7ixQ2w3E4r5',
    payment_processor: 'stripe',
  });

  expect(landed[0]).toMatchObject({ timestamp: paidAt, client_timestamp: paidAt, timestamp_clamped: false });
  expect(landed[0]?.received_at).toBeGreaterThan(paidAt + 86_400_000); // it arrived later: arrival is not the date

  // Stripe delivers the same event again (a new signature, a later arrival): same record id, same date.
  expect((await deliver(url, payload)).status).toBe(200);
  const copies = (await records.all()).filter((r) => transactionOf(r) === 'in_1QeYk0LkdIwHu7ixQ2w3E4r5');
  expect(copies.map((r) => r.id)).toEqual([id, id]);
  expect(copies.map((r) => r.timestamp)).toEqual([paidAt, paidAt]);
  expect(copies[1]?.received_at).toBeGreaterThanOrEqual(copies[0]?.received_at ?? Infinity);
  expect(new Date(copies[1]?.timestamp ?? 0).toISOString().slice(0, 7)).toBe('2026-01');
});

it('runs as the README says: on STRIPE_EXAMPLE_PORT, not PORT, with a fixture signed by send-fixture.ts', async () => {
  // PORT is the gateway's own (taken): an example that listened on PORT could not start.
  const example = spawnWithOutput('examples/stripe-webhook/server.ts', {
    ...process.env,
    PORT: new URL(gateway.url).port,
    STRIPE_EXAMPLE_PORT: '0',
    STRIPE_EXAMPLE_HOST: '127.0.0.1',
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    TALLY_ENDPOINT: gateway.url,
    TALLY_SECRET_TOKEN: secret,
  });
  processes.push(example);
  const exampleUrl = (
    await outputMatching(example, /listening on (http:\/\/\S+\/stripe\/webhook)/, 30_000)
  )[1] as string;
  expect(new URL(exampleUrl).port).not.toBe(new URL(gateway.url).port);

  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      ...SOURCE_NODE_ARGS,
      'examples/stripe-webhook/send-fixture.ts',
      fixturePath('invoice.paid.manual'),
      exampleUrl,
    ],
    { cwd: ROOT, env: { ...process.env, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }, timeout: 30_000 },
  );
  expect(stdout).toMatch(/^200 /);
  const [record] = (await records.all()).filter((r) => transactionOf(r) === 'in_1QnMan0LkdIwHu7ixLtdInv');
  expect(record).toMatchObject({
    timestamp: Date.parse('2026-02-23T09:17:45Z'), // paid_at: invoiced on 20 February, paid on the 23rd
    data: { event_type: 'purchase', amount: 299, currency: 'GBP' },
  });
});

it('refuses a delivery whose signature does not verify, sending nothing', async () => {
  const counting = await startFaultProxy(gateway.url, []);
  proxies.push(counting);
  const url = await webhook(revenueClientForWebhooks(counting.url, secret));
  const payload = fixture('invoice.paid.manual');
  const forged = stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_someone_else' });
  expect((await deliver(url, payload, forged)).status).toBe(400);
  expect(
    (
      await deliver(
        url,
        payload.replace('29900', '1'),
        stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }),
      )
    ).status,
  ).toBe(400);
  expect(counting.posts).toHaveLength(0);
});

it('acknowledges events that carry no revenue without sending anything', async () => {
  const counting = await startFaultProxy(gateway.url, []);
  proxies.push(counting);
  const url = await webhook(revenueClientForWebhooks(counting.url, secret));
  const response = await deliver(url, fixture('customer.subscription.updated.cancel_at_period_end'));
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({
    received: true,
    ignored: expect.stringContaining('no change'),
  });
  expect(counting.posts).toHaveLength(0);
});

it('answers 503 within Stripe’s 10 seconds when Tally keeps failing, so that Stripe delivers again', async () => {
  const failing = await startFaultProxy(
    gateway.url,
    Array.from({ length: 10 }, () => ({ status: 503, body: { error: 'Service unavailable' } })),
  );
  proxies.push(failing);
  const revenue = new RevenueClient({
    endpoint: failing.url,
    token: secret,
    maxRetries: 2,
    retryBackoff: 10,
  });
  const url = await webhook(revenue);
  const payload = fixture('invoice.paid.subscription_cycle');
  const response = await deliver(url, payload);
  expect(response.status).toBe(503);
  expect(failing.posts).toHaveLength(3);
  expect(
    (await records.all()).filter((r) => transactionOf(r) === 'in_1QjCyc0LkdIwHu7ixRenInv1'),
  ).toHaveLength(0);
});

it('answers 500 (not 2xx) when Tally refuses the token, without retrying', async () => {
  const counting = await startFaultProxy(gateway.url, []);
  proxies.push(counting);
  const url = await webhook(revenueClientForWebhooks(counting.url, 'sec_revokedrevokedrevokedrevoked00'));
  expect((await deliver(url, fixture('invoice.paid.jpy'))).status).toBe(500);
  expect(counting.posts.map((p) => p.status)).toEqual([401]);
});
