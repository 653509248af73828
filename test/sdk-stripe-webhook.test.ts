// The Stripe webhook example (examples/stripe-webhook) end to end: Stripe-signed deliveries (signed in the
// test with the stripe package's own test-header helper) reach the example server, which sends revenue to a
// real gateway; a 2xx answer must mean the record is already in the gateway's record log.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { IngestRecord } from '@tally/contract';
import { RevenueClient } from '@tally/revenue';
import { FileTokenStore } from '@tally/tokens';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { revenueClientForWebhooks, startWebhookServer } from '../examples/stripe-webhook/server.ts';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.ts';
import { type GatewayProcess, ROOT, startGatewayProcess, tempDataDir } from './support/processes.ts';
import { openRecordReader, type RecordReader } from './support/record-log.ts';

const WEBHOOK_SECRET = 'whsec_test_5f3c1a9e7d2b4c6a8e0f1d3b5a7c9e1f';
const stripe = new Stripe('sk_unused');
const fixture = (name: string) =>
  readFileSync(`${ROOT}packages/revenue/src/fixtures/stripe/${name}.json`, 'utf8');

let gateway: GatewayProcess;
let records: RecordReader;
let secret: string;
const servers: Server[] = [];
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  const dataDir = tempDataDir();
  ({ token: secret } = await new FileTokenStore(dataDir).create('sdk-stripe', 'secret'));
  gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir, RATE_LIMIT_PER_HOUR: '100000' });
  records = openRecordReader(dataDir);
});
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  for (const proxy of proxies) await proxy.close();
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

function deliver(
  url: string,
  payload: string,
  signature = stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }),
) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
    signal: AbortSignal.timeout(10_000), // Stripe's own limit
  });
}

const transactionOf = (record: IngestRecord) =>
  record.type === 'revenue' ? record.data.transaction_id : undefined;

it('answers 200 only once the record is durable in Tally, and a redelivery keeps the record id', async () => {
  const url = await webhook(revenueClientForWebhooks(gateway.url, secret));
  const payload = fixture('invoice.paid.subscription_create');
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

  expect((await deliver(url, payload)).status).toBe(200); // Stripe delivers again: same record id
  const copies = (await records.all()).filter((r) => transactionOf(r) === 'in_1QeYk0LkdIwHu7ixQ2w3E4r5');
  expect(copies.map((r) => r.id)).toEqual([id, id]);
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
