// GET …/revenue/*: revenue figures of a project, which a share link shows only when its creator included
// revenue (access `revenue`). Part 1 serves the monthly MRR report (as `tally report mrr --json`); the
// other revenue views come with the dashboard's part 2 under the same prefix and the same access.
import { mrrReport } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { route } from './route.ts';
import { answer } from './traffic-routes.ts';

export function revenueRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'revenueMrr', async (request, reply) => {
    const q = request.query as { from: string; to: string; currency?: string; format?: string };
    const report = await mrrReport(deps.warehouse, {
      project: request.params.project as string,
      from: q.from,
      to: q.to,
      currency: q.currency?.toUpperCase(),
    });
    return answer(reply, request.headers.accept, q.format, report, () => report as never, 'mrr');
  });
}
