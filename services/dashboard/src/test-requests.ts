// A valid request for any operation of the API (operations.ts), for tests that go through every one:
// parameters filled in, the query string and body each operation needs to pass validation.
import type { OPERATIONS } from './api/operations.ts';

/** A request for an operation on `project`, with valid parameters and body. */
export function requestFor(op: (typeof OPERATIONS)[number], project: string) {
  const url = op.url
    .replace(':project', project)
    .replace(':dimension', 'page')
    .replace(':funnel', 'f1')
    .replace(':goal', 'g1')
    .replace(':annotation', 'a1')
    .replace(':segment', 's1')
    .replace(':share', 's1')
    .replace(':token', 'shr_x')
    .replace(':customer_id', 'c1')
    .replace(':email', 'someone@example.com')
    .replace(':id', 'i1');
  const queries: Record<string, string> = {
    revenueReconciliation: '?month=2026-01',
    revenueRecords: '?figure=new&from=2026-01&to=2026-02',
    revenueMrrDaily: '?from=2026-01-01&to=2026-01-31',
    revenueFunnel: '?from=2026-05-01&to=2026-05-07',
    revenueCustomers: '?limit=10',
    revenueBreakdown: '?from=2026-01&to=2026-02&by=plan',
    revenueSearch: '?key=plan&value=pro',
    projectHealth: '?stall_minutes=5',
  };
  const query =
    queries[op.operationId] ??
    (op.url.includes('/revenue/') ? '?from=2026-01&to=2026-02' : '?from=2026-05-01&to=2026-05-07');
  const bodies: Record<string, Record<string, unknown>> = {
    updateProject: { time_zone: 'Europe/Berlin' },
    updateReportSubscription: { weekly: true, monthly: false },
    createGoal: { name: 'Signup', event_name: 'signup' },
    createFunnel: { name: 'F', steps: [{ path: '/' }, { event_name: 'signup' }] },
    createShare: { name: 'x' },
    createAnnotation: { date: '2026-05-02', text: 'deploy' },
    createSegment: { name: 'Mobile', filters: 'device==Mobile' },
    setMemberRole: { role: 'viewer' },
    createInvitation: { email: 'invitee@example.com', role: 'viewer' },
    createAlert: { kind: 'dead_letters', threshold: 5, webhook_url: 'https://hooks.example/t' },
    updateAlert: { threshold: 6 },
  };
  return {
    method: op.method,
    url: `${url}${op.querystring ? query : ''}`,
    ...(bodies[op.operationId] ? { payload: bodies[op.operationId] } : {}),
  };
}
