// The revenue client against a real gateway process. A fault proxy in front of it answers the first
// requests with 429 or 503 (the gateway's real rate limit has a one-hour window, too long for a test);
// every other request reaches the real gateway, and records are read from its record log.
import { randomUUID } from 'node:crypto';
import type { IngestRecord } from '@tally/contract';
import { RevenueClient, RevenueValidationError, TallyHttpError } from '@tally/revenue';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.ts';
import { type GatewayProcess, startGatewayProcess, tempDataDir } from './support/processes.ts';
import { openRecordReader, type RecordReader } from './support/record-log.ts';

let gateway: GatewayProcess;
let records: RecordReader;
let secret: string;
let publicToken: string;
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  ({ token: secret } = await store.create('sdk-revenue', 'secret'));
  ({ token: publicToken } = await store.create('sdk-revenue', 'public'));
  gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir, RATE_LIMIT_PER_HOUR: '100000' });
  records = openRecordReader(dataDir);
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.close();
  await records?.close();
  await gateway?.stop();
});

async function proxy(faults: Parameters<typeof startFaultProxy>[1]) {
  const started = await startFaultProxy(gateway.url, faults);
  proxies.push(started);
  return started;
}

/** A client whose waits are recorded and skipped: the delays are checked, the retries are real requests. */
function client(endpoint: string, token = secret) {
  const waits: number[] = [];
  const revenue = new RevenueClient({
    token,
    endpoint,
    retryBackoff: 100,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { revenue, waits };
}

const transactionOf = (record: IngestRecord) =>
  record.type === 'revenue' ? record.data.transaction_id : undefined;

const payload = (transactionId: string) => ({
  visitor_fingerprint: 'fp_9f2',
  session_id: 's_1',
  customer_id: 'cus_42',
  amount: 49,
  currency: 'usd',
  transaction_id: transactionId,
  mrr_impact: 49,
  is_recurring: true,
  metadata: { plan: 'pro', interval: 'monthly' },
});

it('lands a record exactly once after a 429 (waiting its Retry-After) and a 503', async () => {
  const faulty = await proxy([
    { status: 429, headers: { 'retry-after': '2' }, body: { error: 'Rate limited' } },
    { status: 503, headers: { 'retry-after': '5' }, body: { error: 'Service unavailable' } },
  ]);
  const { revenue, waits } = client(faulty.url);
  const transactionId = `in_${randomUUID()}`;
  const result = await revenue.subscription(payload(transactionId));

  expect(result.attempts).toBe(3);
  expect(waits[0]).toBe(2000); // the 429's Retry-After
  expect(faulty.posts.map((p) => p.status)).toEqual([429, 503, 202]);
  // Every attempt carried the same envelope: same id, same transaction_id.
  expect(new Set(faulty.posts.map((p) => p.body)).size).toBe(1);
  expect(JSON.parse(faulty.posts[0]?.body ?? '{}').id).toBe(result.id);

  await records.waitFor('the revenue record', (r) => r.id === result.id);
  const landed = (await records.all()).filter((r) => transactionOf(r) === transactionId);
  expect(landed).toHaveLength(1);
  expect(landed[0]?.data).toMatchObject({
    event_type: 'subscription',
    amount: 49,
    currency: 'USD',
    mrr_impact: 49,
  });
});

it('keeps the record id when an acknowledgement is lost, so the duplicate can be dropped by id', async () => {
  // The first request reaches the gateway and is stored, but the client is told 503.
  const faulty = await proxy([{ status: 503, forwardFirst: true, body: { error: 'Service unavailable' } }]);
  const { revenue } = client(faulty.url);
  const transactionId = `in_${randomUUID()}`;
  const result = await revenue.renewal(payload(transactionId));
  expect(result.attempts).toBe(2);

  const copies = await records.waitFor('both copies', (r) => transactionOf(r) === transactionId, 2);
  expect(copies.map((r) => r.id)).toEqual([result.id, result.id]);
});

it('throws validation errors before any request is made', async () => {
  const counting = await proxy([]);
  const { revenue } = client(counting.url);
  const { customer_id: _omitted, ...withoutCustomer } = payload('in_invalid');
  const error = await revenue.track(withoutCustomer as never).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RevenueValidationError);
  expect((error as Error).message).toBe('invalid revenue record: customer_id is required');
  await expect(revenue.purchase({ ...payload('in_neg'), amount: -1 })).rejects.toThrow(
    /amount must be positive/,
  );
  expect(counting.posts).toHaveLength(0);
});

it.each([
  ['an unknown token', 'sec_unknownunknownunknownunknown00', 401, 'Invalid API token'],
  ['a public token', 'public', 403, 'Revenue events require secret token'],
])('does not retry the real gateway refusing %s (%i)', async (_name, token, status, message) => {
  const counting = await proxy([]);
  const { revenue, waits } = client(counting.url, token === 'public' ? publicToken : token);
  const error = (await revenue
    .track(payload(`in_${randomUUID()}`))
    .catch((e: unknown) => e)) as TallyHttpError;
  expect(error).toBeInstanceOf(TallyHttpError);
  expect([error.status, error.serverMessage, error.retryable]).toEqual([status, message, false]);
  expect(counting.posts).toHaveLength(1);
  expect(waits).toEqual([]);
});
