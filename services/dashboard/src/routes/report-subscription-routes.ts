// GET/PATCH …/report-subscription: the signed-in member's choice of the project's scheduled email reports
// (weekly, monthly), kept in the state store and read by the report scheduler
// (docs/design/scheduled-reports.md). Every signed-in member has one, viewers included: read keys and share
// links are refused by the operation's `member` access.
import type { FastifyInstance } from 'fastify';
import type { Caller } from '../access.ts';
import type { DashboardDeps } from '../deps.ts';
import { ForbiddenError } from '../errors.ts';
import { route } from './route.ts';

const memberEmail = (caller: Caller): string => {
  if (caller.kind !== 'user') throw new ForbiddenError();
  return caller.user.email;
};

export function reportSubscriptionRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'getReportSubscription', async (request) => {
    const { weekly, monthly } = await deps.reportSubscriptions.get(
      request.params.project,
      memberEmail(request.caller),
    );
    return { weekly, monthly };
  });
  route(app, deps, 'updateReportSubscription', async (request) => {
    const { weekly, monthly } = await deps.reportSubscriptions.set(
      request.params.project,
      memberEmail(request.caller),
      request.body,
    );
    return { weekly, monthly };
  });
}
