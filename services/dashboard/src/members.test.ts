// The members API through inject (real chDB, LMDB store): owners and admins list the members and change
// roles; a viewer may not; an admin may not make, change or remove an owner; the last owner stays; a
// removed member is gone from the list and their change is answered 404.
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

const dir = mkdtempSync(join(tmpdir(), 'tally-members-'));
const ORIGIN = 'http://dashboard.test';
const P = '/api/v1/projects/alpha/members';
let warehouse: Warehouse;
let app: FastifyInstance;
let store: LmdbStateStore;
const cookies: Record<string, string> = {};

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  store = new LmdbStateStore(dir);
  const users = new Users(store);
  const sessions = new Sessions(store);
  const tokens = new FileTokenStore(dir);
  for (const [name, role] of [
    ['owner', 'owner'],
    ['admin', 'admin'],
    ['viewer', 'viewer'],
    ['other', 'viewer'],
  ] as const) {
    await users.add(`${name}@example.com`, ['alpha'], `${name} password!`, role);
    cookies[name] = `tally_session=${await sessions.create(`${name}@example.com`)}`;
  }
  const readKeys = new TokenVerifier(tokens, { refreshMs: 60_000, kinds: ['read'] });
  await readKeys.refresh();
  app = await buildDashboard({
    config: loadConfig({ TALLY_DATA_DIR: dir, DASHBOARD_PUBLIC_URL: ORIGIN }),
    warehouse,
    users,
    invitations: new Invitations(store, users),
    sessions,
    shares: new ShareLinks(store),
    projects: new ProjectStore(store),
    readKeys,
    tokens,
    attemptLimit: { max: 5, timeWindow: 60_000 },
    signInFailures: new SignInFailures(store),
    webRoot: join(dir, 'no-web'),
    alerts: new AlertStore(store),
    reportSubscriptions: new ReportSubscriptions(store),
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await store?.close();
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

const as = (who: string) => ({ origin: ORIGIN, cookie: cookies[who] ?? '' });
const list = async (who = 'owner') =>
  Object.fromEntries(
    (await app.inject({ method: 'GET', url: P, headers: as(who) }))
      .json()
      .members.map((m: { email: string; role: string }) => [m.email.split('@')[0], m.role]),
  );
const setRole = (who: string, member: string, role: string) =>
  app.inject({ method: 'PATCH', url: `${P}/${member}@example.com`, headers: as(who), payload: { role } });
const remove = (who: string, member: string) =>
  app.inject({ method: 'DELETE', url: `${P}/${member}@example.com`, headers: as(who) });

describe('members', () => {
  it('are listed with their roles for owners and admins, not for viewers', async () => {
    expect(await list()).toEqual({ owner: 'owner', admin: 'admin', viewer: 'viewer', other: 'viewer' });
    expect(await list('admin')).toEqual(await list());
    expect((await app.inject({ method: 'GET', url: P, headers: as('viewer') })).statusCode).toBe(403);
  });

  it('change roles: an admin within admin and viewer, only an owner for owners; the last owner stays', async () => {
    const promoted = await setRole('admin', 'viewer', 'admin');
    expect(promoted.statusCode).toBe(200);
    expect(promoted.json()).toEqual({ email: 'viewer@example.com', role: 'admin', has_password: true });
    expect((await setRole('admin', 'viewer', 'owner')).statusCode).toBe(403);
    expect((await setRole('admin', 'owner', 'viewer')).statusCode).toBe(403);
    expect((await setRole('other', 'viewer', 'viewer')).statusCode).toBe(403);
    const last = await setRole('owner', 'owner', 'admin');
    expect([last.statusCode, last.json().message]).toEqual([400, expect.stringMatching(/last owner/)]);
    expect((await setRole('owner', 'admin', 'owner')).statusCode).toBe(200);
    expect((await setRole('owner', 'owner', 'viewer')).statusCode).toBe(200);
    expect(await list('admin')).toEqual({
      owner: 'viewer',
      admin: 'owner',
      viewer: 'admin',
      other: 'viewer',
    });
    expect((await setRole('admin', 'viewer', 'root')).statusCode).toBe(400);
    expect((await setRole('admin', 'nobody', 'viewer')).statusCode).toBe(404);
  });

  it('are removed by an owner or admin (an owner by an owner only); the last owner stays', async () => {
    // Now: admin@ is the one owner, viewer@ an admin.
    expect((await remove('viewer', 'admin')).statusCode).toBe(403);
    expect((await remove('admin', 'admin')).statusCode).toBe(400);
    expect((await remove('viewer', 'other')).statusCode).toBe(204);
    expect((await remove('viewer', 'other')).statusCode).toBe(404);
    expect(Object.keys(await list('admin')).sort()).toEqual(['admin', 'owner', 'viewer']);
    // A removed member's session no longer reads the project.
    expect(
      (await app.inject({ method: 'GET', url: '/api/v1/projects/alpha', headers: as('other') })).statusCode,
    ).toBe(403);
  });
});
