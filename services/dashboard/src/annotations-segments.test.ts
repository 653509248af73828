// Annotations and saved segments through the API (inject, real chDB, LMDB store): created, listed and
// deleted by a user granted the project (an owner or admin); read by a viewer, a read key and a share link,
// which may not write; bad
// input answered 400 with a message; and what the CLI adds (the same store) seen by the API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import {
  AlertStore,
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
import { buildDashboard } from './dashboard.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-annotations-'));
const ORIGIN = 'http://dashboard.test';
let warehouse: Warehouse;
let app: FastifyInstance;
let store: LmdbStateStore;
let projects: ProjectStore;
const tokens = new FileTokenStore(dir);
let key: string;
let session: string;
let viewerSession: string;
let adminSession: string;
let share: string;

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  store = new LmdbStateStore(dir);
  const users = new Users(store);
  const shares = new ShareLinks(store);
  projects = new ProjectStore(store);
  key = (await tokens.create('alpha', 'read')).token;
  await users.add('a@example.com', ['alpha'], 'alpha password');
  session = await new Sessions(store).create('a@example.com');
  await users.add('viewer@example.com', ['alpha'], 'viewer password', 'viewer');
  viewerSession = await new Sessions(store).create('viewer@example.com');
  await users.add('admin@example.com', ['alpha'], 'admin password', 'admin');
  adminSession = await new Sessions(store).create('admin@example.com');
  share = (await shares.create('alpha', {})).token;
  const readKeys = new TokenVerifier(tokens, { refreshMs: 60_000, kinds: ['read'] });
  await readKeys.refresh();
  app = await buildDashboard({
    config: loadConfig({ TALLY_DATA_DIR: dir, DASHBOARD_PUBLIC_URL: ORIGIN }),
    warehouse,
    users,
    invitations: new Invitations(store, users),
    sessions: new Sessions(store),
    shares,
    projects,
    alerts: new AlertStore(store),
    reportSubscriptions: new ReportSubscriptions(store),
    readKeys,
    tokens,
    attemptLimit: { max: 5, timeWindow: 60_000 },
    signInFailures: new SignInFailures(store),
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

const asUser = () => ({ origin: ORIGIN, cookie: `tally_session=${session}` });
const headersOf = () => ({
  user: { origin: ORIGIN, cookie: `tally_session=${session}` },
  viewer: { origin: ORIGIN, cookie: `tally_session=${viewerSession}` },
  admin: { origin: ORIGIN, cookie: `tally_session=${adminSession}` },
  key: { origin: ORIGIN, authorization: `Bearer ${key}` },
  share: { origin: ORIGIN, authorization: `Bearer ${share}` },
});
const P = '/api/v1/projects/alpha';

describe.each(['annotations', 'segments'] as const)('%s', (kind) => {
  const body =
    kind === 'annotations'
      ? { date: '2026-05-02', text: 'v2 deployed' }
      : { name: 'Mobile visitors', filters: 'device==Mobile;country==DE|FR' };

  it('are created and deleted by a user granted the project, and read by every reader', async () => {
    const created = await app.inject({
      method: 'POST',
      url: `${P}/${kind}`,
      headers: asUser(),
      payload: body,
    });
    expect(created.statusCode).toBe(201);
    const item = created.json();
    expect(item).toMatchObject({ ...body, id: expect.any(String), created_by: 'a@example.com' });
    for (const [who, headers] of Object.entries(headersOf())) {
      const list = await app.inject({ method: 'GET', url: `${P}/${kind}`, headers });
      expect(list.statusCode, who).toBe(200);
      expect(list.json()[kind], who).toContainEqual(item);
    }
    const deleted = await app.inject({ method: 'DELETE', url: `${P}/${kind}/${item.id}`, headers: asUser() });
    expect(deleted.statusCode).toBe(204);
    const again = await app.inject({ method: 'DELETE', url: `${P}/${kind}/${item.id}`, headers: asUser() });
    expect(again.statusCode).toBe(404);
    const list = await app.inject({ method: 'GET', url: `${P}/${kind}`, headers: asUser() });
    expect(list.json()[kind]).not.toContainEqual(item);
  });

  it('may not be written by a viewer, a read key or a share link (403), which still read them; an admin may', async () => {
    const { key: keyHeaders, share: shareHeaders, viewer, admin } = headersOf();
    const mine = (
      await app.inject({ method: 'POST', url: `${P}/${kind}`, headers: asUser(), payload: body })
    ).json();
    const byAdmin = await app.inject({ method: 'POST', url: `${P}/${kind}`, headers: admin, payload: body });
    expect(byAdmin.statusCode).toBe(201);
    expect(
      (await app.inject({ method: 'DELETE', url: `${P}/${kind}/${byAdmin.json().id}`, headers: admin }))
        .statusCode,
    ).toBe(204);
    for (const headers of [viewer, keyHeaders, shareHeaders]) {
      expect(
        (await app.inject({ method: 'POST', url: `${P}/${kind}`, headers, payload: body })).statusCode,
      ).toBe(403);
      expect(
        (await app.inject({ method: 'DELETE', url: `${P}/${kind}/${mine.id}`, headers })).statusCode,
      ).toBe(403);
      expect((await app.inject({ method: 'GET', url: `${P}/${kind}`, headers })).json()[kind]).toContainEqual(
        mine,
      );
    }
  });
});

describe('bad input', () => {
  it.each([
    ['annotations', { date: '2026-02-30', text: 'x' }, /date 2026-02-30/],
    ['annotations', { date: 'yesterday', text: 'x' }, /date/],
    ['annotations', { date: '2026-05-02', text: '   ' }, /blank/],
    ['annotations', { date: '2026-05-02' }, /text/],
    ['segments', { name: 'x', filters: 'planet==Mars' }, /unknown filter dimension/],
    ['segments', { name: 'x', filters: 'device=Mobile' }, /operator|filter/],
    ['segments', { name: '', filters: 'device==Mobile' }, /name/],
  ])('POST %s %j is refused (400) with a message', async (kind, payload, message) => {
    const res = await app.inject({ method: 'POST', url: `${P}/${kind}`, headers: asUser(), payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(message);
  });
});

describe('annotations added beside the server (the CLI writes the same store)', () => {
  it('are listed by the API, oldest date first', async () => {
    const late = await projects.addAnnotation('alpha', {
      date: '2030-01-02',
      text: 'late',
      created_by: 'cli',
    });
    const early = await projects.addAnnotation('alpha', {
      date: '2030-01-01T23:00:00Z',
      text: 'early',
      created_by: 'cli',
    });
    const list = (await app.inject({ method: 'GET', url: `${P}/annotations`, headers: asUser() })).json();
    const texts = list.annotations.map((a: { text: string }) => a.text);
    expect(texts.indexOf(early.text)).toBeLessThan(texts.indexOf(late.text));
    expect(list.annotations).toContainEqual(late);
  });
});

describe('the time-series CSV', () => {
  const csvRows = async (query: string) => {
    const res = await app.inject({
      method: 'GET',
      url: `${P}/traffic/timeseries?${query}&format=csv`,
      headers: asUser(),
    });
    expect(res.statusCode).toBe(200);
    const [header, ...lines] = res.body.trim().split('\r\n');
    const columns = (header as string).split(',');
    return lines.map((line) => {
      const cells = line.split(',');
      return [cells[columns.indexOf('date')], cells[columns.indexOf('annotation')]];
    });
  };

  it("lists each note on the row of its bucket, an instant in the project's time zone", async () => {
    for (const [date, text] of [
      ['2032-01-02', 'deploy'],
      ['2032-01-02T10:15:00Z', 'fix'],
      ['2032-01-02T23:30:00-02:00', 'campaign'], // 2032-01-03 01:30 UTC
      ['2032-01-04', 'after the range'],
    ]) {
      await projects.addAnnotation('alpha', {
        date: date as string,
        text: text as string,
        created_by: 'cli',
      });
    }
    expect(await csvRows('from=2032-01-01&to=2032-01-03&interval=day')).toEqual([
      ['2032-01-01', ''],
      ['2032-01-02', 'deploy; fix'],
      ['2032-01-03', 'campaign'],
    ]);
    const hours = await csvRows('from=2032-01-02&to=2032-01-02&interval=hour');
    expect(hours.filter(([, note]) => note)).toEqual([
      ['2032-01-02 00:00', 'deploy'],
      ['2032-01-02 10:00', 'fix'],
    ]);
  });
});
