// Every operation of the API (operations.ts) × every kind of caller → what authorise() answers: let through,
// 401 or 403. The table names each operation: one added without a row fails the first test, so that who may
// call it is decided, not inherited by accident. Owners and admins change a project; viewers read it. The
// same table is then tried over HTTP: every guarded route of a real dashboard (chDB, LMDB), called by a
// signed-in owner, admin, viewer and non-member, a read key, share links with and without revenue, and
// nobody, answers 401 or 403 exactly where the table says, and neither where it lets the caller through.
import { Sessions, type ShareLink, type User, Users } from '@tally/state-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorise, type Caller } from './access.ts';
import { OPERATIONS, type OperationId } from './api/operations.ts';
import { ForbiddenError, UnauthorizedError } from './errors.ts';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';
import { requestFor } from './test-requests.ts';

const PROJECT = 'shop';
const CALLERS = [
  'owner',
  'admin',
  'viewer',
  'non-member',
  'read key',
  'share',
  'share without revenue',
  'nobody',
] as const;
type Outcome = 'ok' | 401 | 403;
type Row = readonly [Outcome, Outcome, Outcome, Outcome, Outcome, Outcome, Outcome, Outcome];

//                          owner admin viewer non-member key  share share-no-rev nobody
const READ: Row = /*     */ ['ok', 'ok', 'ok', 403, 'ok', 'ok', 'ok', 401];
const REVENUE: Row = /*  */ ['ok', 'ok', 'ok', 403, 'ok', 'ok', 403, 401];
const MANAGE: Row = /*   */ ['ok', 'ok', 403, 403, 403, 403, 403, 401];
const OPERATE: Row = /*  */ ['ok', 'ok', 'ok', 403, 'ok', 403, 403, 401];
const SIGNED_IN: Row = /**/ ['ok', 'ok', 'ok', 'ok', 401, 401, 401, 401];
const MEMBER: Row = /*   */ ['ok', 'ok', 'ok', 403, 403, 403, 403, 401];
const ANYONE: Row = /*   */ ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok'];

const EXPECTED: Record<OperationId, Row> = {
  trafficSummary: READ,
  trafficTimeseries: READ,
  trafficBreakdown: READ,
  trafficCurrentVisitors: READ,
  trafficRealtime: READ,
  trafficGoals: READ,
  trafficFunnel: READ,
  listGoals: READ,
  createGoal: MANAGE,
  deleteGoal: MANAGE,
  listAnnotations: READ,
  createAnnotation: MANAGE,
  deleteAnnotation: MANAGE,
  listSegments: READ,
  createSegment: MANAGE,
  deleteSegment: MANAGE,
  listFunnels: READ,
  createFunnel: MANAGE,
  deleteFunnel: MANAGE,
  listProjects: ANYONE,
  getProject: READ,
  updateProject: MANAGE,
  getInstall: MANAGE,
  createPublicToken: MANAGE,
  getSession: SIGNED_IN,
  signIn: ANYONE,
  signOut: ANYONE,
  setPassword: ANYONE,
  requestPasswordReset: ANYONE,
  viewInvitation: ANYONE,
  acceptInvitation: ANYONE,
  listMembers: MANAGE,
  listInvitations: MANAGE,
  createInvitation: MANAGE,
  revokeInvitation: MANAGE,
  getReportSubscription: MEMBER,
  updateReportSubscription: MEMBER,
  setMemberRole: MANAGE,
  removeMember: MANAGE,
  listShares: MANAGE,
  createShare: MANAGE,
  revokeShare: MANAGE,
  getShared: ANYONE,
  unlockShared: ANYONE,
  revenueMrr: REVENUE,
  revenueMrrDaily: REVENUE,
  revenueCohorts: REVENUE,
  revenueCurrencies: REVENUE,
  revenueExchangeRates: REVENUE,
  revenueAttribution: REVENUE,
  revenueReconciliation: REVENUE,
  revenueRecords: REVENUE,
  revenueFunnel: REVENUE,
  revenueCustomers: REVENUE,
  revenueCustomer: REVENUE,
  revenueBreakdown: REVENUE,
  revenueSearch: REVENUE,
  projectHealth: OPERATE,
  listAlerts: MEMBER,
  createAlert: MANAGE,
  updateAlert: MANAGE,
  deleteAlert: MANAGE,
};

const user = (roles: User['roles'], projects = Object.keys(roles ?? {})): Caller => ({
  kind: 'user',
  session: 'session',
  user: { email: 'u@example.com', password_hash: null, projects, roles, created_at: '2026-11-27T00:00:00Z' },
});
const share = (include_revenue: boolean): Caller => ({
  kind: 'share',
  share: {
    id: 'sh',
    project: PROJECT,
    name: '',
    hint: '',
    token_hash: '',
    password_hash: null,
    include_revenue,
    embed_origins: [],
    created_at: '2026-11-27T00:00:00Z',
  } satisfies ShareLink,
});
const CALLER_OF: Record<(typeof CALLERS)[number], Caller> = {
  owner: user({ [PROJECT]: 'owner' }),
  admin: user({ [PROJECT]: 'admin' }),
  viewer: user({ [PROJECT]: 'viewer' }),
  'non-member': user({ other: 'owner' }),
  'read key': { kind: 'read_key', project: PROJECT },
  share: share(true),
  'share without revenue': share(false),
  nobody: { kind: 'none' },
};

function outcome(caller: Caller, access: Parameters<typeof authorise>[1]): Outcome {
  try {
    authorise(caller, access, PROJECT);
    return 'ok';
  } catch (error) {
    if (error instanceof UnauthorizedError) return 401;
    if (error instanceof ForbiddenError) return 403;
    throw error;
  }
}

describe('every operation × every caller', () => {
  it('has a row for every operation, and none for an operation that is gone', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(OPERATIONS.map((o) => o.operationId).sort());
  });

  for (const op of OPERATIONS) {
    it(`${op.operationId} (${op.method} ${op.url})`, () => {
      const got = CALLERS.map((c) => outcome(CALLER_OF[c], op.access));
      const want = EXPECTED[op.operationId as OperationId];
      expect(Object.fromEntries(CALLERS.map((c, i) => [c, got[i]]))).toEqual(
        Object.fromEntries(CALLERS.map((c, i) => [c, want[i]])),
      );
    });
  }

  it('reads a user stored before roles as owner of their projects, and `*` as owner of every one', () => {
    expect(outcome(user(undefined, [PROJECT]), 'editor')).toBe('ok');
    expect(outcome(user(undefined, ['*']), 'editor')).toBe('ok');
    expect(outcome(user({ other: 'viewer' }, ['other']), 'editor')).toBe(403);
  });
});

describe('every guarded route × every caller, over HTTP', () => {
  const ORIGIN = 'http://dashboard.test';
  let dashboard: TestDashboard;
  const headersOf: Partial<Record<(typeof CALLERS)[number], Record<string, string>>> = {};

  beforeAll(async () => {
    dashboard = await startTestDashboard('access-http', PROJECT);
    const users = new Users(dashboard.store);
    const sessions = new Sessions(dashboard.store);
    for (const [who, role, project] of [
      ['owner', 'owner', PROJECT],
      ['admin', 'admin', PROJECT],
      ['viewer', 'viewer', PROJECT],
      ['non-member', 'owner', 'other'],
    ] as const) {
      await users.add(`${who}@example.com`, [project], undefined, role);
      headersOf[who] = { cookie: `tally_session=${await sessions.create(`${who}@example.com`)}` };
    }
    headersOf['read key'] = { authorization: `Bearer ${dashboard.key}` };
    headersOf.share = { authorization: `Bearer ${dashboard.shareWith}` };
    headersOf['share without revenue'] = { authorization: `Bearer ${dashboard.shareWithout}` };
    headersOf.nobody = {};
  }, 60_000);
  afterAll(() => dashboard?.close());

  const statusOf = (status: number): Outcome | 'other' =>
    status === 401 ? 401 : status === 403 ? 403 : 'other';

  for (const op of OPERATIONS.filter((o) => o.access !== 'public')) {
    it(`${op.operationId} (${op.method} ${op.url})`, async () => {
      const got: Record<string, Outcome | 'other'> = {};
      for (const caller of CALLERS) {
        const res = await dashboard.app.inject({
          ...requestFor(op, PROJECT),
          headers: { origin: ORIGIN, ...headersOf[caller] },
        });
        got[caller] = statusOf(res.statusCode);
      }
      const want = EXPECTED[op.operationId as OperationId];
      // 'ok' in the table: let through, whatever the handler answers then (200, 201, 204, 400, 404).
      expect(got).toEqual(
        Object.fromEntries(CALLERS.map((c, i) => [c, want[i] === 'ok' ? 'other' : want[i]])),
      );
    });
  }
});
