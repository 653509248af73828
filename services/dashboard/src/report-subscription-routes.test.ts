// GET/PATCH …/report-subscription through inject() on a real dashboard (chDB, LMDB): a member's choice of
// weekly/monthly reports is theirs alone, kept in the state store the scheduler reads, and read keys and
// share links have none.
import { ReportSubscriptions, Sessions, Users } from '@tally/state-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

const PROJECT = 'subs';
const ORIGIN = 'http://dashboard.test';
let dashboard: TestDashboard;
let ada: string;
let bob: string;

beforeAll(async () => {
  dashboard = await startTestDashboard('report-subscription', PROJECT);
  const users = new Users(dashboard.store);
  await users.add('ada@example.com', [PROJECT]);
  await users.add('bob@example.com', [PROJECT]);
  const sessions = new Sessions(dashboard.store);
  ada = await sessions.create('ada@example.com');
  bob = await sessions.create('bob@example.com');
}, 60_000);
afterAll(() => dashboard?.close());

const url = `/api/v1/projects/${PROJECT}/report-subscription`;
const as = (session: string) => ({ origin: ORIGIN, cookie: `tally_session=${session}` });

describe('report subscriptions', () => {
  it("keep each member's own weekly/monthly choice, which the scheduler reads", async () => {
    expect((await dashboard.app.inject({ url, headers: as(ada) })).json()).toEqual({
      weekly: false,
      monthly: false,
    });
    const set = await dashboard.app.inject({
      method: 'PATCH',
      url,
      headers: as(ada),
      payload: { weekly: true, monthly: false },
    });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({ weekly: true, monthly: false });
    expect((await dashboard.app.inject({ url, headers: as(ada) })).json()).toEqual({
      weekly: true,
      monthly: false,
    });
    expect((await dashboard.app.inject({ url, headers: as(bob) })).json()).toEqual({
      weekly: false,
      monthly: false,
    });
    expect(await new ReportSubscriptions(dashboard.store).list(PROJECT)).toEqual([
      { email: 'ada@example.com', weekly: true, monthly: false },
    ]);
    // Both off: the member is no longer listed.
    await dashboard.app.inject({
      method: 'PATCH',
      url,
      headers: as(ada),
      payload: { weekly: false, monthly: false },
    });
    expect(await new ReportSubscriptions(dashboard.store).list(PROJECT)).toEqual([]);
  });

  it('refuse a body that is not the two choices, and callers who are not members', async () => {
    const bad = await dashboard.app.inject({
      method: 'PATCH',
      url,
      headers: as(ada),
      payload: { weekly: 'yes' },
    });
    expect(bad.statusCode).toBe(400);
    const byKey = await dashboard.app.inject({ url, headers: { authorization: `Bearer ${dashboard.key}` } });
    expect(byKey.statusCode).toBe(403);
    const byShare = await dashboard.app.inject({
      url,
      headers: { authorization: `Bearer ${dashboard.shareWith}` },
    });
    expect(byShare.statusCode).toBe(403);
    const other = await dashboard.app.inject({
      url: '/api/v1/projects/other/report-subscription',
      headers: as(ada),
    });
    expect(other.statusCode).toBe(403);
  });
});
