// Allowed origins per project through the gateway's routes (inject()), on a real file token store and the
// real verifier: browsers refused from other origins with 403, servers and secret tokens never, the CORS
// preflight of an origin no project allows refused, and nothing stored for a refused request.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTokenStore, TokenVerifier } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordsIn, type TestGateway, testGateway } from './testing.ts';

let gw: TestGateway;
let store: FileTokenStore;
let verifier: TokenVerifier;
let shopPublic: string;
let shopSecret: string;
let openPublic: string;

const SHOP = 'https://shop.example';
const pageview = (token: string, session = 's1') => ({
  type: 'pageview',
  token,
  data: { session_id: session, url: `${SHOP}/` },
});

beforeAll(async () => {
  store = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-origins-')));
  shopPublic = (await store.create('shop', 'public')).token;
  shopSecret = (await store.create('shop', 'secret')).token;
  openPublic = (await store.create('open', 'public')).token;
  await store.setAllowedOrigins('shop', [SHOP, 'https://WWW.shop.example/']);
  verifier = new TokenVerifier(store, { refreshMs: 100_000, kinds: ['public', 'secret'] });
  await verifier.refresh();
  gw = await testGateway({}, { tokens: verifier, trackerDir: null });
});
afterAll(async () => {
  await gw?.close();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/ingest',
    headers: { 'content-type': 'text/plain', ...headers },
    payload: JSON.stringify(body),
  });

describe('a project with allowed origins', () => {
  it('accepts its public token from a listed origin (normalized: case, trailing slash)', async () => {
    expect((await post(pageview(shopPublic, 'listed'), { origin: SHOP })).statusCode).toBe(202);
    expect((await post(pageview(shopPublic), { origin: 'https://www.shop.example' })).statusCode).toBe(202);
  });

  it('refuses it from another origin with 403 and stores nothing', async () => {
    for (const origin of [
      'https://evil.example',
      'http://shop.example',
      'https://shop.example:8443',
      'null',
    ]) {
      const res = await post(pageview(shopPublic, 'refused'), { origin });
      expect(res.statusCode, origin).toBe(403);
      expect(res.json()).toEqual({ error: 'Origin not allowed for this project' });
      // The browser may read the refusal (so the tracker does not retry it).
      expect(res.headers['access-control-allow-origin']).toBe('*');
    }
    const stored = await recordsIn(gw.log, 1);
    expect(stored.filter((r) => r.data.session_id === 'refused')).toEqual([]);
  });

  it('lets requests without Origin (servers) and secret tokens pass', async () => {
    expect((await post(pageview(shopPublic))).statusCode).toBe(202);
    expect((await post(pageview(shopSecret), { origin: 'https://evil.example' })).statusCode).toBe(202);
  });

  it('leaves other projects open', async () => {
    expect((await post(pageview(openPublic), { origin: 'https://evil.example' })).statusCode).toBe(202);
  });
});

describe('the CORS preflight', () => {
  const preflight = (origin: string) =>
    gw.app.inject({
      method: 'OPTIONS',
      url: '/api/ingest',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-token',
      },
    });

  it('is answered while some project with a public token is open to every origin', async () => {
    expect((await preflight('https://evil.example')).statusCode).toBe(204);
  });

  it('is refused (403) for an origin no project allows once every project lists its origins', async () => {
    await store.setAllowedOrigins('open', ['https://open.example']);
    await verifier.refresh();
    const refused = await preflight('https://evil.example');
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['access-control-allow-methods']).toBeUndefined();
    expect(refused.headers['access-control-allow-headers']).toBeUndefined();
    expect((await preflight(SHOP)).statusCode).toBe(204);
    expect((await preflight('https://open.example')).statusCode).toBe(204);
    // Clearing the list opens the project again.
    await store.setAllowedOrigins('open', []);
    await verifier.refresh();
    expect((await preflight('https://evil.example')).statusCode).toBe(204);
  });

  it('is answered on a gateway where no project restricts origins, even before any public token', async () => {
    const fresh = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-origins-')));
    await fresh.create('servers', 'secret');
    const freshVerifier = new TokenVerifier(fresh, { refreshMs: 100_000, kinds: ['public', 'secret'] });
    await freshVerifier.refresh();
    const other = await testGateway({}, { tokens: freshVerifier, trackerDir: null });
    try {
      const res = await other.app.inject({
        method: 'OPTIONS',
        url: '/api/ingest',
        headers: { origin: 'https://any.example', 'access-control-request-method': 'POST' },
      });
      expect(res.statusCode).toBe(204);
    } finally {
      await other.close();
      freshVerifier.stop();
    }
  });
});
