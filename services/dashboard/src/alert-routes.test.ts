// The alert rules' API over HTTP (inject, real chDB, LMDB store): owners and admins create, change and
// delete rules, viewers read them, read keys and share links neither; bad rules are 400s that say why
// (unknown kind, threshold out of range, a webhook that is not http(s), an email of no member, a rule
// telling nobody); rules are listed with their state, firing first.
import { AlertStore, Sessions, Users } from '@tally/state-store';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

const ORIGIN = 'http://dashboard.test';
const P = '/api/v1/projects/watch/alerts';
let dashboard: TestDashboard;
let app: FastifyInstance;
const cookies: Record<string, string> = {};

beforeAll(async () => {
  dashboard = await startTestDashboard('alert-routes', 'watch');
  app = dashboard.app;
  const users = new Users(dashboard.store);
  const sessions = new Sessions(dashboard.store);
  for (const [name, role, project] of [
    ['owner', 'owner', 'watch'],
    ['admin', 'admin', 'watch'],
    ['viewer', 'viewer', 'watch'],
    ['stranger', 'owner', 'elsewhere'],
  ] as const) {
    await users.add(`${name}@example.com`, [project], `${name} password!`, role);
    cookies[name] = `tally_session=${await sessions.create(`${name}@example.com`)}`;
  }
}, 60_000);
afterAll(() => dashboard?.close());

const as = (who: string) =>
  who === 'key'
    ? { authorization: `Bearer ${dashboard.key}` }
    : who === 'share'
      ? { authorization: `Bearer ${dashboard.shareWith}` }
      : who === 'nobody'
        ? { origin: ORIGIN }
        : { origin: ORIGIN, cookie: cookies[who] ?? '' };
const create = (who: string, payload: object) =>
  app.inject({ method: 'POST', url: P, headers: as(who), payload });
const STALLED = { kind: 'stalled', record_type: 'revenue', threshold: 30, emails: ['Viewer@Example.com'] };

describe('alert rules', () => {
  it('are created by owners and admins only, and deleted by them', async () => {
    const made = await create('admin', STALLED);
    expect(made.statusCode).toBe(201);
    expect(made.json()).toMatchObject({
      kind: 'stalled',
      record_type: 'revenue',
      threshold: 30,
      emails: ['viewer@example.com'],
      webhook_url: null,
      created_by: 'admin@example.com',
      description: 'no revenue record landed for 30 minutes',
      state: { status: 'pending', reason: 'not evaluated yet' },
    });
    for (const [who, status] of [
      ['viewer', 403],
      ['stranger', 403],
      ['key', 403],
      ['share', 403],
      ['nobody', 401],
    ] as const) {
      expect((await create(who, STALLED)).statusCode, who).toBe(status);
      const id = made.json().id;
      expect(
        (await app.inject({ method: 'DELETE', url: `${P}/${id}`, headers: as(who) })).statusCode,
        who,
      ).toBe(status);
    }
    const id = made.json().id;
    expect((await app.inject({ method: 'DELETE', url: `${P}/${id}`, headers: as('owner') })).statusCode).toBe(
      204,
    );
    expect((await app.inject({ method: 'DELETE', url: `${P}/${id}`, headers: as('owner') })).statusCode).toBe(
      404,
    );
  });

  it('refuse bad rules with a 400 that says why', async () => {
    const refused = async (payload: object) => {
      const res = await create('owner', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      return res.json().message;
    };
    expect(await refused({ ...STALLED, kind: 'outage' })).toBe(
      'unknown kind outage: one of stalled, dead_letters, traffic, mrr_churn',
    );
    expect(await refused({ ...STALLED, threshold: 0 })).toBe(
      'threshold of a stalled rule is minutes: a whole number from 1 to 10080',
    );
    expect(await refused({ ...STALLED, record_type: 'click' })).toBe(
      'record_type of a stalled rule is one of pageview, event, identify, revenue',
    );
    expect(
      await refused({ kind: 'traffic', direction: 'drop', threshold: 150, emails: ['owner@example.com'] }),
    ).toBe('threshold of a traffic rule is percent: a whole number from 1 to 100');
    expect(await refused({ kind: 'traffic', threshold: 50, emails: ['owner@example.com'] })).toBe(
      'direction of a traffic rule is spike or drop',
    );
    expect(await refused({ kind: 'mrr_churn', threshold: 0.0000001, emails: ['owner@example.com'] })).toBe(
      'threshold of an mrr_churn rule is an amount of money: from 0.000001 to 999999999999999',
    );
    expect(await refused({ ...STALLED, webhook_url: 'ftp://hooks.example/x' })).toBe(
      'webhook_url must be an http(s) URL',
    );
    expect(await refused({ ...STALLED, webhook_url: 'not a url' })).toBe(
      'webhook_url must be an http(s) URL',
    );
    expect(await refused({ ...STALLED, emails: ['stranger@example.com'] })).toBe(
      'stranger@example.com is not a member of the project',
    );
    expect(await refused({ ...STALLED, emails: [] })).toBe(
      'a rule needs at least one email or a webhook_url to tell',
    );
    expect(await refused({ ...STALLED, threshold: 'soon' })).toMatch(/^body\.threshold /);
  });

  it('are changed as a whole, and listed with their state, firing first', async () => {
    const a = (await create('owner', STALLED)).json();
    const b = (
      await create('owner', {
        kind: 'mrr_churn',
        threshold: 99.5,
        currency: 'eur',
        webhook_url: 'https://hooks.example/t',
      })
    ).json();
    expect(b).toMatchObject({ currency: 'EUR', emails: [], webhook_url: 'https://hooks.example/t' });
    const patched = await app.inject({
      method: 'PATCH',
      url: `${P}/${a.id}`,
      headers: as('admin'),
      payload: { kind: 'dead_letters', threshold: 5 },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      id: a.id,
      kind: 'dead_letters',
      threshold: 5,
      emails: ['viewer@example.com'],
    });
    expect(patched.json().record_type).toBeUndefined();
    const bad = await app.inject({
      method: 'PATCH',
      url: `${P}/${a.id}`,
      headers: as('admin'),
      payload: { threshold: -1 },
    });
    expect([bad.statusCode, bad.json().message]).toEqual([
      400,
      'threshold of a dead_letters rule is dead letters: a whole number from 0 to 1000000',
    ]);
    expect(
      (
        await app.inject({
          method: 'PATCH',
          url: `${P}/nope`,
          headers: as('owner'),
          payload: { threshold: 1 },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await app.inject({
          method: 'PATCH',
          url: `${P}/${a.id}`,
          headers: as('viewer'),
          payload: { threshold: 1 },
        })
      ).statusCode,
    ).toBe(403);

    await new AlertStore(dashboard.store).setState('watch', b.id, {
      status: 'firing',
      since: '2026-11-27T03:00:00.000Z',
      reason: 'MRR churned',
      evaluated_at: '2026-11-27T03:05:00.000Z',
      pending_deliveries: 0,
      last_delivery_error: null,
    });
    const listed = await app.inject({ method: 'GET', url: P, headers: as('viewer') });
    expect(listed.statusCode).toBe(200);
    // A viewer sees where the webhook goes, not the URL (a credential); an admin sees it whole.
    expect(listed.json().rules[0].webhook_url).toBe('https://hooks.example/…');
    const asAdmin = await app.inject({ method: 'GET', url: P, headers: as('admin') });
    expect(asAdmin.json().rules[0].webhook_url).toBe('https://hooks.example/t');
    expect(
      listed.json().rules.map((r: { id: string; state: { status: string } }) => [r.id, r.state.status]),
    ).toEqual([
      [b.id, 'firing'],
      [a.id, 'pending'],
    ]);
    for (const [who, status] of [
      ['key', 403],
      ['share', 403],
      ['stranger', 403],
      ['nobody', 401],
    ] as const) {
      expect((await app.inject({ method: 'GET', url: P, headers: as(who) })).statusCode, who).toBe(status);
    }
  });
});
