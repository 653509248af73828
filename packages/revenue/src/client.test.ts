// The revenue client against a scripted fetch: validation before any request, which failures are retried
// and how long it waits, the same envelope on every attempt, and the typed errors it throws.
import { describe, expect, it } from 'vitest';
import { RevenueClient, type RevenueClientOptions } from './client.ts';
import { RevenueValidationError, TallyHttpError, TallyNetworkError, TallyTimeoutError } from './errors.ts';
import { recordIdFor } from './record-id.ts';

type Step = { status: number; body?: unknown; headers?: Record<string, string> } | 'network' | 'hang';

function scripted(steps: Step[], options: Partial<RevenueClientOptions> = {}) {
  const requests: Array<{ url: string; headers: Record<string, string>; body: Record<string, unknown> }> = [];
  const sleeps: number[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    requests.push({
      url: String(input),
      headers: init?.headers as Record<string, string>,
      body: JSON.parse(String(init?.body)),
    });
    const step = steps.shift() ?? { status: 202, body: { success: true } };
    if (step === 'network') throw new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') });
    if (step === 'hang') {
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    }
    return new Response(JSON.stringify(step.body ?? {}), { status: step.status, headers: step.headers });
  };
  const client = new RevenueClient({
    token: 'sec_test',
    endpoint: 'https://tally.example.com',
    fetch: fetchImpl,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
  return { client, requests, sleeps };
}

const record = {
  visitor_fingerprint: 'fp_9f2',
  session_id: 's_1',
  customer_id: 'cus_42',
  amount: 49,
  currency: 'usd',
  transaction_id: 'in_1Q2w3E',
  metadata: { plan: 'pro', interval: 'monthly' },
};

describe('validation', () => {
  it.each([
    [{ ...record, customer_id: undefined }, 'customer_id', 'customer_id is required'],
    [{ ...record, amount: -5 }, 'amount', 'amount must be positive'],
    [{ ...record, currency: 'XYZ' }, 'currency', 'currency must be an ISO 4217 currency code'],
    [{ ...record, event_type: 'gift' }, 'event_type', 'event_type must be one of purchase'],
    [{ ...record, metadata: 'pro' }, 'metadata', 'metadata must be an object'],
  ])('throws a RevenueValidationError naming the field before any request (%#)', async (payload, field, message) => {
    const { client, requests } = scripted([]);
    const error = await client.track(payload as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RevenueValidationError);
    expect((error as RevenueValidationError).field).toBe(field);
    expect((error as Error).message).toContain(message);
    expect((error as RevenueValidationError).retryable).toBe(false);
    expect(requests).toHaveLength(0);
  });

  it('accepts zero and negative amounts for churn and refund', async () => {
    const { client, requests } = scripted([]);
    await client.churn({ ...record, amount: 0, mrr_impact: -49 });
    await client.refund({ ...record, amount: -49 });
    expect(requests.map((r) => (r.body.data as { event_type: string }).event_type)).toEqual([
      'churn',
      'refund',
    ]);
  });

  it('refuses an id that is not a UUID', async () => {
    const { client, requests } = scripted([]);
    await expect(client.track(record, { id: 'abc' })).rejects.toBeInstanceOf(RevenueValidationError);
    expect(requests).toHaveLength(0);
  });
});

describe('sending', () => {
  it('posts the envelope with the secret token in X-API-Token, and does not change the caller object', async () => {
    const { client, requests } = scripted([]);
    const payload = structuredClone(record);
    const result = await client.subscription(payload);
    expect(result.attempts).toBe(1);
    expect(requests[0]?.url).toBe('https://tally.example.com/api/ingest');
    expect(requests[0]?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-api-token': 'sec_test',
    });
    expect(requests[0]?.body).toEqual({
      type: 'revenue',
      id: result.id,
      data: { ...record, currency: 'USD', event_type: 'subscription' },
    });
    expect(payload).toEqual(record);
  });

  it.each([
    ['purchase', 'purchase'],
    ['subscription', 'subscription'],
    ['renewal', 'renewal'],
    ['upgrade', 'upgrade'],
    ['downgrade', 'downgrade'],
  ] as const)('%s() sets event_type %s', async (helper, eventType) => {
    const { client, requests } = scripted([]);
    await client[helper](record);
    expect((requests[0]?.body.data as { event_type: string }).event_type).toBe(eventType);
  });

  it('uses the id it is given', async () => {
    const { client, requests } = scripted([]);
    const id = recordIdFor('stripe:evt_1');
    expect((await client.track(record, { id })).id).toBe(id);
    expect(requests[0]?.body.id).toBe(id);
  });
});

describe('retries', () => {
  it('retries 5xx and network errors with backoff, sending the same envelope every time', async () => {
    const { client, requests, sleeps } = scripted([
      { status: 503, body: { error: 'Service unavailable' }, headers: { 'retry-after': '5' } },
      'network',
      { status: 500, body: { error: 'Internal error' } },
    ]);
    const result = await client.track(record);
    expect(result.attempts).toBe(4);
    expect(sleeps).toEqual([375, 750, 1500]); // 500·2^(n−1) with jitter 0.5: ¾ of the ceiling
    expect(new Set(requests.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(requests[0]?.body.id).toBe(result.id);
  });

  it('waits for Retry-After after a 429', async () => {
    const { client, sleeps } = scripted([
      { status: 429, body: { error: 'Rate limited' }, headers: { 'retry-after': '7' } },
    ]);
    await client.track(record);
    expect(sleeps).toEqual([7000]);
  });

  it('does not wait for a Retry-After longer than maxRetryAfter: throws a retryable 429 at once', async () => {
    const { client, sleeps, requests } = scripted([
      { status: 429, body: { error: 'Rate limited' }, headers: { 'retry-after': '3600' } },
    ]);
    const error = (await client.track(record).catch((e: unknown) => e)) as TallyHttpError;
    expect(error).toBeInstanceOf(TallyHttpError);
    expect([error.status, error.serverMessage, error.retryable, error.retryAfterMs]).toEqual([
      429,
      'Rate limited',
      true,
      3_600_000,
    ]);
    expect(sleeps).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('gives up after maxRetries with the last error, still marked retryable', async () => {
    const { client, requests } = scripted(
      Array.from({ length: 5 }, () => ({ status: 503, body: { error: 'Service unavailable' } })),
      { maxRetries: 2 },
    );
    const error = (await client.track(record).catch((e: unknown) => e)) as TallyHttpError;
    expect(requests).toHaveLength(3);
    expect(error.message).toBe('Tally answered 503: Service unavailable');
    expect(error.retryable).toBe(true);
  });

  it.each([
    [400, { message: 'data.amount must be a number' }, 'data.amount must be a number'],
    [401, { error: 'Invalid API token' }, 'Invalid API token'],
    [403, { error: 'Revenue events require secret token' }, 'Revenue events require secret token'],
    [413, { message: 'body is larger than 65536 bytes' }, 'body is larger than 65536 bytes'],
  ])('never retries a %i and throws it with the server message', async (status, body, message) => {
    const { client, requests } = scripted([{ status, body }]);
    const error = (await client.track(record).catch((e: unknown) => e)) as TallyHttpError;
    expect(error).toBeInstanceOf(TallyHttpError);
    expect([error.status, error.serverMessage, error.retryable]).toEqual([status, message, false]);
    expect(requests).toHaveLength(1);
  });

  it('times out an attempt that hangs and retries it', async () => {
    const { client, requests } = scripted(['hang'], { timeout: 20 });
    const result = await client.track(record);
    expect(result.attempts).toBe(2);
    expect(requests[1]?.body.id).toBe(requests[0]?.body.id);
  });

  it('throws a retryable TallyTimeoutError when every attempt times out', async () => {
    const { client } = scripted(['hang', 'hang'], { timeout: 20, maxRetries: 1 });
    const error = await client.track(record).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TallyTimeoutError);
    expect((error as TallyTimeoutError).retryable).toBe(true);
  });

  it("stops when the caller's signal aborts", async () => {
    const controller = new AbortController();
    const { client, requests } = scripted(['hang'], { timeout: 60_000 });
    const sending = client.track(record, { signal: controller.signal });
    controller.abort(new Error('webhook deadline'));
    const error = await sending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TallyNetworkError);
    expect((error as Error).message).toBe('the send was aborted');
    expect(requests).toHaveLength(1);
  });
});

describe('recordIdFor', () => {
  it('gives the same UUID v5 for the same name, another for another name', () => {
    const id = recordIdFor('stripe:evt_1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(recordIdFor('stripe:evt_1')).toBe(id);
    expect(recordIdFor('stripe:evt_2')).not.toBe(id);
  });
});
