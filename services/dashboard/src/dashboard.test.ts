// The dashboard's access rules, on every operation of the API (inject, real chDB, LMDB store, file token
// store): no credentials, a revoked read key, a key, a share link or a user of another project, and a
// cross-site request (whatever its path's encoding) are refused; sign-in is rate-limited per address and
// slowed per (address, account) pair, never for the owner at another address; setting a password ends the
// older sessions; a share link hides revenue unless included; the share page's frame-ancestors are its
// listed origins, each exactly an origin; CSV answers; no API answer may be cached.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import {
  AlertStore,
  hashSecret,
  Invitations,
  LmdbStateStore,
  ProjectStore,
  ReportSubscriptions,
  Sessions,
  ShareLinks,
  SignInFailures,
  Users,
} from '@tally/state-store';
import { FileTokenStore, TokenVerifier } from '@tally/tokens';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardOpenApiDocument } from './api/openapi.ts';
import { BODY_LIMIT_BYTES, OPERATIONS } from './api/operations.ts';
import { buildDashboard } from './dashboard.ts';
import { requestFor } from './test-requests.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-dashboard-'));
let warehouse: Warehouse;
let app: FastifyInstance;
let store: LmdbStateStore;
const tokens = new FileTokenStore(dir);
let keyA: string;
let keyB: string;
let revokedKey: string;
let sessionA: string;
let sessionB: string;
let shareA: string;
let shareAWithRevenue: string;
const ORIGIN = 'http://dashboard.test';
/** The clock of the sign-in waits: stepped by the tests, never by the machine's speed. */
let signInClock = 1_000_000;
let users: Users;

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  store = new LmdbStateStore(dir);
  users = new Users(store);
  const sessions = new Sessions(store);
  const shares = new ShareLinks(store);
  keyA = (await tokens.create('alpha', 'read')).token;
  keyB = (await tokens.create('beta', 'read')).token;
  revokedKey = (await tokens.create('alpha', 'read')).token;
  await tokens.revoke(revokedKey);
  await users.add('a@example.com', ['alpha']);
  await users.setPassword('a@example.com', 'alpha password');
  await users.add('b@example.com', ['beta']);
  await users.add('c@example.com', ['alpha'], 'gamma password');
  sessionA = await sessions.create('a@example.com');
  sessionB = await sessions.create('b@example.com');
  shareA = (await shares.create('alpha', { embed_origins: ['https://blog.example'] })).token;
  shareAWithRevenue = (await shares.create('alpha', { include_revenue: true })).token;
  const readKeys = new TokenVerifier(tokens, { refreshMs: 60_000, kinds: ['read'] });
  await readKeys.refresh();
  app = await buildDashboard({
    config: loadConfig({ TALLY_DATA_DIR: dir, DASHBOARD_PUBLIC_URL: ORIGIN }),
    warehouse,
    users,
    invitations: new Invitations(store, users),
    sessions,
    shares,
    projects: new ProjectStore(store),
    alerts: new AlertStore(store),
    reportSubscriptions: new ReportSubscriptions(store),
    readKeys,
    tokens,
    attemptLimit: { max: 5, timeWindow: 60_000 },
    signInFailures: new SignInFailures(store, { now: () => signInClock }),
    webRoot: join(dir, 'no-web'),
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await store?.close();
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cookie = (session: string) => ({ cookie: `tally_session=${session}` });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sameOrigin = { origin: ORIGIN };

describe('every operation of the API', () => {
  const guarded = OPERATIONS.filter((op) => op.access !== 'public');
  const projectScoped = guarded.filter((op) => op.url.includes(':project'));

  it.each(
    guarded.map((op) => [op.operationId, op] as const),
  )('%s refuses a request without credentials (401)', async (_id, op) => {
    const res = await app.inject({ ...requestFor(op, 'alpha'), headers: sameOrigin });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Unauthorized' });
  });

  it.each(
    projectScoped.map((op) => [op.operationId, op] as const),
  )('%s refuses a revoked key (401), and a key, a share link or a user of another project (403)', async (_id, op) => {
    const alpha = requestFor(op, 'alpha');
    expect(
      (await app.inject({ ...alpha, headers: { ...sameOrigin, ...bearer(revokedKey) } })).statusCode,
    ).toBe(401);
    expect(
      (await app.inject({ ...alpha, headers: { ...sameOrigin, ...bearer(`read_${'x'.repeat(32)}`) } }))
        .statusCode,
    ).toBe(401);
    const beta = requestFor(op, 'beta');
    for (const headers of [bearer(keyA), bearer(shareA), cookie(sessionA)]) {
      const res = await app.inject({ ...beta, headers: { ...sameOrigin, ...headers } });
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
    }
    for (const headers of [cookie(sessionB), bearer(keyB)]) {
      expect((await app.inject({ ...alpha, headers: { ...sameOrigin, ...headers } })).statusCode).toBe(403);
    }
  });

  it.each(
    OPERATIONS.filter((op) => op.method !== 'GET').map((op) => [op.operationId, op] as const),
  )('%s refuses a cross-site request (403), even with a valid session', async (_id, op) => {
    for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }]) {
      const res = await app.inject({
        ...requestFor(op, 'alpha'),
        headers: { ...headers, ...cookie(sessionA) },
      });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Cross-site request refused' });
    }
  });

  /** The path written otherwise: encoded, in another case, with doubled slashes, dot segments. */
  const spellings = (url: string) => [
    url.replace('/api/', '/%61pi/'),
    url.replace('/api/', '/%61%70%69/'),
    url.replace('/api/v1/', '/api/%76%31/'),
    url.replace('/api/', '/%2561pi/'),
    url.replace('/api/', '/Api/'),
    url.replace('/api/', '/API/'),
    url.replace('/api/', '//api/'),
    url.replace('/api/v1/', '/api//v1/'),
    url.replace('/api/', '/./api/'),
    url.replace('/api/v1/', '/api/v1/../v1/'),
    url.replace('/api/', '/api%2f'),
    url.replace('/alpha', '/%61lpha'),
  ];

  it.each(
    OPERATIONS.filter((op) => !['GET', 'HEAD', 'OPTIONS'].includes(op.method)).map(
      (op) => [op.operationId, op] as const,
    ),
  )('%s refuses a cross-site request whatever the spelling of its path (403)', async (_id, op) => {
    const request = requestFor(op, 'alpha');
    for (const url of spellings(request.url)) {
      const res = await app.inject({
        ...request,
        url,
        remoteAddress: '198.51.100.201',
        headers: { origin: 'https://evil.example', ...cookie(sessionA) },
      });
      expect(res.statusCode, url).toBe(403);
      expect(res.json(), url).toEqual({ error: 'Cross-site request refused' });
    }
  });

  const publicTokensOfAlpha = async () =>
    (await tokens.list()).filter((t) => t.project_id === 'alpha' && t.kind === 'public').length;

  it('reaches an operation through an encoded path, so the check cannot read the raw path', async () => {
    // The attack of issue 26: a same-site page created a public token with the victim's cookie.
    const url = '/%61pi/v1/projects/alpha/public-tokens';
    const before = await publicTokensOfAlpha();
    const refused = await app.inject({
      method: 'POST',
      url,
      headers: { origin: 'https://evil.example', ...cookie(sessionA) },
    });
    expect(refused.statusCode).toBe(403);
    expect(await publicTokensOfAlpha()).toBe(before);
    const own = await app.inject({ method: 'POST', url, headers: { ...sameOrigin, ...cookie(sessionA) } });
    expect(own.statusCode).toBe(201);
    expect(await publicTokensOfAlpha()).toBe(before + 1);
  });
});

describe('request bodies', () => {
  const doc = dashboardOpenApiDocument() as {
    paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
  };
  const documented = (operationId: string) =>
    Object.values(doc.paths)
      .flatMap((methods) => Object.values(methods))
      .find((o) => o.operationId === operationId)?.responses ?? {};

  it.each(
    OPERATIONS.filter((op) => op.body).map((op) => [op.operationId, op] as const),
  )('%s answers a body over the limit with 413 and a non-JSON one with 415, both documented', async (_id, op) => {
    // An address of its own: sign-in's per-address attempt limit must not count these.
    const base = { ...requestFor(op, 'alpha'), remoteAddress: '198.51.100.200' };
    const headers = { ...sameOrigin, ...cookie(sessionA) };
    const tooLarge = await app.inject({
      ...base,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(BODY_LIMIT_BYTES) }),
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toEqual({ message: 'the body is too large' });
    const notJson = await app.inject({
      ...base,
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x',
    });
    expect(notJson.statusCode).toBe(415);
    expect(notJson.json()).toEqual({ message: 'Content-Type must be application/json' });
    expect(Object.keys(documented(op.operationId))).toEqual(expect.arrayContaining(['413', '415']));
  });
});

describe('reading', () => {
  it('answers a read key, a share link and a user of the project', async () => {
    for (const headers of [bearer(keyA), bearer(shareA), cookie(sessionA)]) {
      const res = await app.inject({
        url: '/api/v1/projects/alpha/traffic/summary?from=2026-05-01&to=2026-05-07',
        headers,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        pageviews: 0,
        visits: 0,
        time_zone: 'UTC',
        previous: { from: '2026-04-24', to: '2026-04-30' },
      });
    }
  });

  it('lets editing be done by a signed-in user only', async () => {
    const goal = {
      method: 'POST' as const,
      url: '/api/v1/projects/alpha/goals',
      payload: { name: 'G', path: '/blog/*' },
    };
    expect((await app.inject({ ...goal, headers: bearer(keyA) })).statusCode).toBe(403);
    const created = await app.inject({ ...goal, headers: { ...sameOrigin, ...cookie(sessionA) } });
    expect(created.statusCode).toBe(201);
    const listed = await app.inject({ url: '/api/v1/projects/alpha/goals', headers: bearer(keyA) });
    const id = created.json().id as string;
    const del = (goal: string) =>
      app.inject({
        method: 'DELETE',
        url: `/api/v1/projects/alpha/goals/${goal}`,
        headers: { ...sameOrigin, ...cookie(sessionA) },
      });
    expect((await del('no-such-goal')).statusCode).toBe(404);
    expect(listed.json().goals).toEqual([expect.objectContaining({ name: 'G', path: '/blog/*' })]);
    expect((await del(id)).statusCode).toBe(204);
    expect((await del(id)).statusCode).toBe(404);
  });

  it('hides revenue on a share link that does not include it', async () => {
    const mrr = '/api/v1/projects/alpha/revenue/mrr?from=2026-01&to=2026-02';
    const hidden = await app.inject({ url: mrr, headers: bearer(shareA) });
    expect(hidden.statusCode).toBe(403);
    expect(hidden.json()).toEqual({ error: 'Revenue is not shared' });
    expect((await app.inject({ url: mrr, headers: bearer(shareAWithRevenue) })).statusCode).toBe(200);
    expect((await app.inject({ url: mrr, headers: bearer(keyA) })).statusCode).toBe(200);
    const project = await app.inject({ url: '/api/v1/projects/alpha', headers: bearer(shareA) });
    expect(project.json().access).toEqual({ kind: 'share', can_edit: false, role: null, revenue: false });
  });

  it('hides every revenue view on a share link without revenue, and health on every share link', async () => {
    for (const op of OPERATIONS.filter((o) => o.access === 'revenue')) {
      const request = requestFor(op, 'alpha');
      const hidden = await app.inject({ ...request, headers: bearer(shareA) });
      expect(hidden.statusCode, op.operationId).toBe(403);
      expect(hidden.json()).toEqual({ error: 'Revenue is not shared' });
      const shown = await app.inject({ ...request, headers: bearer(shareAWithRevenue) });
      // The customer of the request does not exist: found only by those who may look.
      expect(shown.statusCode, op.operationId).toBe(op.operationId === 'revenueCustomer' ? 404 : 200);
    }
    const health = '/api/v1/projects/alpha/health';
    expect((await app.inject({ url: health, headers: bearer(shareAWithRevenue) })).statusCode).toBe(403);
    const res = await app.inject({ url: health, headers: bearer(keyA) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      stall_minutes: 15,
      consumer_groups: null,
      dead_letters: null,
      types: [
        { type: 'pageview', status: 'none', per_minute: new Array(60).fill(0) },
        { type: 'event', status: 'none' },
        { type: 'identify', status: 'none' },
        { type: 'revenue', status: 'none' },
      ],
    });
  });

  it('refuses a month that does not exist, a backwards or too long range, with 400', async () => {
    for (const query of [
      'revenue/mrr?from=2026-13&to=2026-14',
      'revenue/mrr?from=0000-00&to=0000-00',
      'revenue/attribution?from=2026-05&to=2026-01',
      'revenue/attribution?from=2000-01&to=2026-01',
      'revenue/reconciliation?month=2026-00',
      'revenue/funnel?from=2026-05-07&to=2026-05-01',
      'revenue/breakdown?from=2026-01&to=2026-02&by=secret_dim',
      'revenue/breakdown?from=2026-01&to=2026-02&by=plan&filters=secret_dim%3D%3Dx',
      'revenue/mrr?from=2026-01&to=2026-02&filters=plan%3D%3E1',
      'revenue/customers?filters=metadata.%3D%3Dsecret',
      'revenue/mrr/daily?from=2026-02-30&to=2026-03-01',
      'revenue/mrr/daily?from=2025-01-01&to=2026-01-02',
    ]) {
      const res = await app.inject({ url: `/api/v1/projects/alpha/${query}`, headers: bearer(keyA) });
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toHaveProperty('message');
      expect(res.body, query).not.toContain('secret');
    }
  });

  it('answers CSV for format=csv and Accept: text/csv', async () => {
    const res = await app.inject({
      url: '/api/v1/projects/alpha/traffic/timeseries?from=2026-05-01&to=2026-05-02',
      headers: { ...bearer(keyA), accept: 'text/csv' },
    });
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.body.split('\r\n')[0]).toBe(
      'date,pageviews,visitors,visits,bounce_rate,visit_duration_s,events,previous_date,previous_pageviews,previous_visitors,previous_visits,previous_bounce_rate,previous_visit_duration_s,previous_events,annotation',
    );
    expect(res.body.split('\r\n')[1]).toMatch(/^2026-05-01,0,0,0,,,0,2026-04-29,/);
  });

  it('refuses a bad filter or range with 400 naming the problem, never quoting it', async () => {
    const bad = await app.inject({
      url: `/api/v1/projects/alpha/traffic/summary?from=2026-05-01&to=2026-05-07&filters=${encodeURIComponent('secret_dim==x')}`,
      headers: bearer(keyA),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).not.toContain('secret_dim');
    const backwards = await app.inject({
      url: '/api/v1/projects/alpha/traffic/summary?from=2026-05-07&to=2026-05-01',
      headers: bearer(keyA),
    });
    expect(backwards.json()).toEqual({ message: 'from must not be after to' });
  });
});

describe('signing in', () => {
  const signIn = (password: string, ip: string, email = 'a@example.com') =>
    app.inject({
      method: 'POST',
      url: '/api/v1/session',
      remoteAddress: ip,
      headers: sameOrigin,
      payload: { email, password },
    });

  it('sets an HttpOnly, SameSite=Lax session cookie that reads the user’s projects', async () => {
    const res = await signIn('alpha password', '10.0.0.1');
    expect(res.statusCode).toBe(200);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^tally_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).not.toMatch(/Secure/); // plain HTTP here
    const token = /tally_session=([^;]+)/.exec(setCookie)?.[1] as string;
    const session = await app.inject({ url: '/api/v1/session', headers: cookie(token) });
    expect(session.json()).toEqual({
      user: { email: 'a@example.com' },
      projects: ['alpha'],
      roles: { alpha: 'owner' },
    });
    const out = await app.inject({
      method: 'DELETE',
      url: '/api/v1/session',
      headers: { ...sameOrigin, ...cookie(token) },
    });
    expect(out.statusCode).toBe(204);
    expect((await app.inject({ url: '/api/v1/session', headers: cookie(token) })).statusCode).toBe(401);
  });

  it('limits attempts per client address (429 with Retry-After)', async () => {
    const answers: number[] = [];
    // Each for another account: the limit of the address, not the wait of an (address, account) pair.
    for (let i = 0; i < 7; i++)
      answers.push((await signIn('wrong password', '10.0.0.2', `x${i}@example.com`)).statusCode);
    expect(answers).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const limited = await signIn('alpha password', '10.0.0.2');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toEqual({ error: 'Too many attempts' });
  });

  it('lets the owner sign in from another address however many failures others had (no lockout)', async () => {
    // Issue 26: ten wrong passwords from anywhere blocked the account for 15 minutes.
    for (let i = 0; i < 12; i++)
      expect((await signIn('wrong password', `10.1.0.${i}`, 'c@example.com')).statusCode).toBe(401);
    const owner = await signIn('gamma password', '10.1.1.1', 'c@example.com');
    expect(owner.statusCode).toBe(200);
    expect(String(owner.headers['set-cookie'])).toMatch(/^tally_session=/);
  });

  it('slows failures per address and account: a growing wait (429, Retry-After), the password unchecked', async () => {
    // Five requests at most per address: the per-address limit of this app.
    const address = '10.2.0.1';
    expect((await signIn('wrong password', address, 'c@example.com')).statusCode).toBe(401);
    // Even the right password waits (it is not checked).
    const waiting = await signIn('gamma password', address, 'C@example.com');
    expect(waiting.statusCode).toBe(429);
    expect(waiting.headers['retry-after']).toBe('1');
    expect(waiting.json()).toEqual({ error: 'Too many attempts' });
    signInClock += 1_000;
    expect((await signIn('wrong password', address, 'c@example.com')).statusCode).toBe(401);
    expect((await signIn('gamma password', address, 'c@example.com')).headers['retry-after']).toBe('2');
    signInClock += 2_000;
    expect((await signIn('gamma password', address, 'c@example.com')).statusCode).toBe(200);
    // Another account from the address, and the account from another address, do not wait.
    const other = '10.2.0.2';
    expect((await signIn('wrong password', other, 'c@example.com')).statusCode).toBe(401);
    expect((await signIn('alpha password', other, 'a@example.com')).statusCode).toBe(200);
    expect((await signIn('gamma password', '10.2.0.3', 'c@example.com')).statusCode).toBe(200);
  });

  it('ends the older sessions when a sign-in link sets the password, and signs this browser in anew', async () => {
    await users.add('d@example.com', ['alpha'], 'delta password');
    const before = await new Sessions(store).create('d@example.com');
    const session = (token: string) => app.inject({ url: '/api/v1/session', headers: cookie(token) });
    expect((await session(before)).statusCode).toBe(200);
    const older = await users.createSignInLink('d@example.com');
    const link = await users.createSignInLink('d@example.com');
    const setPassword = (token: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/password',
        remoteAddress: '10.3.0.1',
        headers: sameOrigin,
        payload: { token, password: 'new delta password' },
      });
    expect((await setPassword(older)).statusCode).toBe(401); // revoked by the newer link
    const set = await setPassword(link);
    expect(set.statusCode).toBe(200);
    const after = /tally_session=([^;]+)/.exec(String(set.headers['set-cookie']))?.[1] as string;
    expect((await session(before)).statusCode).toBe(401);
    expect((await session(after)).statusCode).toBe(200);
    expect((await setPassword(link)).statusCode).toBe(401); // used
  });
});

describe('caching', () => {
  it('answers every API request with Cache-Control: no-store (JSON, CSV, sessions, errors)', async () => {
    const answers = [
      await app.inject({
        url: '/api/v1/projects/alpha/traffic/summary?from=2026-05-01&to=2026-05-07',
        headers: bearer(keyA),
      }),
      await app.inject({
        url: '/api/v1/projects/alpha/traffic/breakdown/page?from=2026-05-01&to=2026-05-07&format=csv',
        headers: bearer(keyA),
      }),
      await app.inject({
        url: '/api/v1/projects/alpha/revenue/mrr?from=2026-01&to=2026-02',
        headers: cookie(sessionA),
      }),
      await app.inject({ url: '/api/v1/projects', headers: bearer(shareA) }),
      await app.inject({ url: '/api/v1/session', headers: cookie(sessionA) }),
      await app.inject({
        method: 'POST',
        url: '/api/v1/session',
        remoteAddress: '10.4.0.1',
        headers: sameOrigin,
        payload: { email: 'a@example.com', password: 'alpha password' },
      }),
      await app.inject({ url: `/api/v1/shared/${shareA}` }),
      await app.inject({ url: '/api/v1/projects/alpha/traffic/summary?from=2026-05-01&to=2026-05-07' }),
    ];
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200, 200, 200, 200, 200, 401]);
    expect(answers[1]?.headers['content-type']).toMatch(/^text\/csv/);
    for (const res of answers) expect(res.headers['cache-control'], res.body.slice(0, 80)).toBe('no-store');
    // The web app keeps its own caching.
    expect((await app.inject({ url: '/' })).headers['cache-control']).toBe('no-cache');
  });
});

describe('share links', () => {
  const create = (embed_origins: string[]) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/projects/alpha/shares',
      headers: { ...sameOrigin, ...cookie(sessionA) },
      payload: { name: 'embedded', embed_origins },
    });

  it('refuse an embedding origin that is anything but an origin (400), so nothing reaches the CSP', async () => {
    const before = (await new ShareLinks(store).list('alpha')).length;
    for (const origin of [
      'https://blog.example;script-src',
      'https://blog.example;frame-ancestors',
      'https://blog.example,https://evil.example',
      'https://*.example',
      "https://blog.example'",
      'https://Blog.example',
      'https://blog.example:443',
      'https://blog.example/',
      'https://user@blog.example',
      'ftp://blog.example',
    ]) {
      const res = await create([origin]);
      expect(res.statusCode, origin).toBe(400);
      expect(res.json(), origin).toHaveProperty('message');
    }
    expect((await new ShareLinks(store).list('alpha')).length).toBe(before);
    const ok = await create(['https://blog.example', 'http://localhost:8080']);
    expect(ok.statusCode).toBe(201);
    const page = await app.inject({ url: `/share/${ok.json().token}` });
    expect(page.headers['content-security-policy']).toMatch(
      /; frame-ancestors https:\/\/blog\.example http:\/\/localhost:8080$/,
    );
  });

  it("leave out of the page's CSP whatever stored origin is not exactly an origin", async () => {
    // A link stored before origins were checked.
    const token = `shr_${'z'.repeat(43)}`;
    await store.put('shares', hashSecret(token), {
      id: 'legacy',
      project: 'alpha',
      name: 'legacy',
      hint: 'shr_zzzz…',
      token_hash: hashSecret(token),
      password_hash: null,
      include_revenue: false,
      embed_origins: ['https://blog.example', "https://x.example;script-src 'unsafe-inline'", 'https://a,b'],
      created_at: new Date().toISOString(),
    });
    const csp = String((await app.inject({ url: `/share/${token}` })).headers['content-security-policy']);
    expect(csp.split('; ').map((d) => d.split(' ')[0])).toEqual([
      'default-src',
      'script-src',
      'style-src',
      'img-src',
      'connect-src',
      'base-uri',
      'form-action',
      'frame-ancestors',
    ]);
    expect(csp).toMatch(/; frame-ancestors https:\/\/blog\.example$/);
  });
});

describe('pages', () => {
  it("frame a share link's page only from its listed origins, and nothing else", async () => {
    const shared = await app.inject({ url: `/share/${shareA}` });
    expect(shared.headers['content-security-policy']).toMatch(/frame-ancestors https:\/\/blog\.example(;|$)/);
    expect(shared.headers['x-frame-options']).toBeUndefined();
    for (const url of ['/', '/projects/alpha', `/share/${shareAWithRevenue}`, '/share/shr_unknown']) {
      const res = await app.inject({ url });
      expect(res.headers['content-security-policy'], url).toMatch(/frame-ancestors 'none'/);
      expect(res.headers['x-frame-options'], url).toBe('DENY');
    }
  });
});
