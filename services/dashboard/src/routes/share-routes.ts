// Share links: created, listed and revoked by a signed-in user of the project; opened by anyone who has the
// link (GET …/shared/{token}; POST …/unlock with the password for a protected one). The links' tokens are
// shown once, at creation; the store keeps their hashes.
import { publicShare } from '@tally/state-store';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { NotFoundError, UnauthorizedError } from '../errors.ts';
import { dashboardUrl } from '../web.ts';
import { route } from './route.ts';

export function shareRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'listShares', async (request) => ({
    shares: (await deps.shares.list(request.params.project)).map(publicShare),
  }));
  route(app, deps, 'createShare', async (request, reply) => {
    const { share, token } = await deps.shares.create(request.params.project, request.body);
    return reply.code(201).send({
      share: publicShare(share),
      token,
      url: `${dashboardUrl(deps.config, request)}/share/${token}`,
    });
  });
  route(app, deps, 'revokeShare', async (request, reply) => {
    if (!(await deps.shares.revoke(request.params.project, request.params.share))) {
      throw new NotFoundError('no such share link');
    }
    return reply.code(204).send();
  });
  route(app, deps, 'getShared', async (request) => {
    const share = await deps.shares.findByToken(request.params.token);
    if (!share) throw new NotFoundError('no such share link');
    return {
      project: share.project,
      name: share.name,
      password_required: share.password_hash !== null,
      include_revenue: share.include_revenue,
    };
  });
  route(app, deps, 'unlockShared', async (request) => {
    const token = request.params.token;
    if (!(await deps.shares.findByToken(token))) throw new NotFoundError('no such share link');
    const grant = await deps.shares.unlock(token, request.body.password);
    if (!grant) throw new UnauthorizedError('Wrong password');
    return grant;
  });
}
