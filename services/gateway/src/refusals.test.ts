// Refusals counted per project through the gateway's routes (inject()) into the real LMDB state store:
// each kind of refusal whose project is known is counted against it, a 401 and a body never read are not,
// accepted requests are not; a flush written again after a lost answer is counted once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStateStore, type RefusalCount, RefusalCounts } from '@tally/state-store';
import { FileTokenStore, TokenVerifier } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefusalCounter } from './refusals.ts';
import { type TestGateway, testGateway } from './testing.ts';

let gw: TestGateway;
let dir: string;
let store: LmdbStateStore;
let counts: RefusalCounts;
let counter: RefusalCounter;
let shopPublic: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tally-refusals-'));
  store = new LmdbStateStore(dir);
  counts = new RefusalCounts(store);
  counter = new RefusalCounter(counts, { flushMs: 60_000 });
  const tokens = new FileTokenStore(dir);
  shopPublic = (await tokens.create('shop', 'public')).token;
  await tokens.setAllowedOrigins('shop', ['https://shop.example']);
  const verifier = new TokenVerifier(tokens, { refreshMs: 100_000, kinds: ['public', 'secret'] });
  await verifier.refresh();
  gw = await testGateway(
    { RATE_LIMIT_PER_HOUR: '12', BODY_LIMIT: '2048' },
    { tokens: verifier, refusals: counter, trackerDir: null },
  );
});
afterAll(async () => {
  await gw?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const post = (body: unknown, headers: Record<string, string> = {}, raw?: string) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/ingest',
    headers: { 'content-type': 'application/json', ...headers },
    payload: raw ?? JSON.stringify(body),
  });
const pageview = (token?: string) => ({
  type: 'pageview',
  ...(token && { token }),
  data: { session_id: 's1', url: 'https://shop.example/' },
});
const byStatus = (rows: RefusalCount[]) =>
  Object.fromEntries(rows.map((r) => [r.status, r.count])) as Record<number, number>;

describe('refusals per project', () => {
  it('counts every refusal whose project is known, and only those', async () => {
    const hourOf = (t: number) => Math.floor(t / 3_600_000) * 3_600_000;
    const firstHour = hourOf(Date.now());
    const statuses: number[] = [];
    const send = async (...args: Parameters<typeof post>) => statuses.push((await post(...args)).statusCode);
    await send(pageview(shopPublic)); // 202: not a refusal
    await send({ type: 'pageview', token: shopPublic, data: { url: 42 } }); // 400 validation (body token)
    await send(pageview(), { 'x-api-token': shopPublic, origin: 'https://evil.example' }); // 403 origin
    await send({ type: 'revenue', token: shopPublic, data: {} }); // 403 revenue needs a secret token
    await send(pageview(), { 'x-api-token': shopPublic }, `{"pad":"${'x'.repeat(4096)}"}`); // 413, header token
    await send(pageview(), {}, `{"token":"${shopPublic}","pad":"${'x'.repeat(4096)}"}`); // 413, body never read
    await send(pageview('pub_unknown0000000000000000000000')); // 401: no project
    await send(pageview()); // 401 missing
    // The rate limit (12 an hour per address) answers 429 before the body is read: the header tells.
    for (let i = 0; i < 6; i++) await send(pageview(), { 'x-api-token': shopPublic });
    expect(statuses).toEqual([202, 400, 403, 403, 413, 413, 401, 401, 202, 202, 202, 202, 429, 429]);

    await counter.flush();
    const rows = await counts.read('shop', firstHour);
    const sums: Record<number, number> = {};
    for (const r of rows) sums[r.status] = (sums[r.status] ?? 0) + r.count; // an hour may have turned
    expect(sums).toEqual({ 400: 1, 403: 2, 413: 1, 429: 2 });
    expect(rows.every((r) => r.hour >= firstHour && r.hour <= hourOf(Date.now()))).toBe(true);
    expect(await counts.read('test-project', 0)).toEqual([]);
  });

  it('writes a flush whose answer was lost again under the same id: counted once', async () => {
    const project = `lost-${Date.now()}`;
    let calls = 0;
    const flaky = new RefusalCounter(
      {
        async add(p, id, c) {
          await counts.add(p, id, c); // written…
          if (calls++ === 0) throw new Error('connection reset'); // …but the answer is lost
        },
      },
      { flushMs: 60_000 },
    );
    flaky.count(project, 429);
    flaky.count(project, 429);
    await flaky.flush(); // fails, kept
    flaky.count(project, 400);
    await flaky.close(); // the kept flush again, then the new one
    expect(calls).toBe(3);
    expect(byStatus(await counts.read(project, 0))).toEqual({ 400: 1, 429: 2 });
  });

  it('does not hold a shutdown up when the store does not answer', async () => {
    const warnings: string[] = [];
    const stuck = new RefusalCounter(
      { add: () => new Promise<void>(() => {}) },
      { flushMs: 60_000, onWarning: (message) => warnings.push(message) },
    );
    stuck.count('stuck', 400);
    const started = Date.now();
    await stuck.close();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(warnings).toEqual(['refusal counts not stored at shutdown: the state store did not answer']);
  });

  it('sums the flushes of several event loops', async () => {
    const project = `loops-${Date.now()}`;
    const loops = [0, 1, 2].map(() => new RefusalCounter(counts, { flushMs: 60_000 }));
    loops.forEach((loop, i) => {
      for (let n = 0; n <= i; n++) loop.count(project, 400);
    });
    await Promise.all(loops.map((loop) => loop.close()));
    expect(byStatus(await counts.read(project, 0))).toEqual({ 400: 6 });
  });
});
