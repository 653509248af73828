// GET …/revenue/*: revenue figures of a project, which a share link shows only when its creator included
// revenue (access `revenue`). Part 1 serves the monthly MRR report (as `tally report mrr --json`); the
// other revenue views come with the dashboard's part 2 under the same prefix and the same access.
import { mrrReport } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { BadRequestError } from '../errors.ts';
import { route } from './route.ts';
import { answer } from './traffic-routes.ts';

export function revenueRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'revenueMrr', async (request, reply) => {
    const q = request.query as { from: string; to: string; currency?: string; format?: string };
    checkMonths(q.from, q.to);
    const report = await mrrReport(deps.warehouse, {
      project: request.params.project as string,
      from: q.from,
      to: q.to,
      currency: q.currency?.toUpperCase(),
    });
    return answer(reply, request.headers.accept, q.format, report, () => report as never, 'mrr');
  });
}

/** At most 100 years of months, in order (the schema has checked each is a YYYY-MM month). */
export function checkMonths(from: string, to: string): void {
  if (from > to) throw new BadRequestError('from must not be after to');
  const months =
    (Number(to.slice(0, 4)) - Number(from.slice(0, 4))) * 12 + Number(to.slice(5)) - Number(from.slice(5));
  if (months >= 1200) throw new BadRequestError('a range covers at most 100 years of months');
}
