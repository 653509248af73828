// A project's members and their roles (docs/design/roles.md): listed, a role changed, a member removed, by
// the project's owners and admins (access `editor`). Owners are made, unmade and removed by owners only;
// the last owner can be neither demoted nor removed (Users refuses it, answered 400).
import { roleOf } from '@tally/state-store';
import type { FastifyInstance } from 'fastify';
import type { Caller } from '../access.ts';
import type { DashboardDeps } from '../deps.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import { route } from './route.ts';

/** Refuses an admin's change that touches the owner role (making, demoting or removing an owner). */
function checkOwnerChange(caller: Caller, project: string, touchesOwner: boolean): void {
  if (!touchesOwner) return;
  if (caller.kind !== 'user' || roleOf(caller.user, project) !== 'owner') {
    throw new ForbiddenError('Only an owner makes, changes or removes an owner');
  }
}

export function memberRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const memberOf = async (project: string, email: string) => {
    const member = (await deps.users.members(project)).find((m) => m.email === email.toLowerCase());
    if (!member) throw new NotFoundError('no such member');
    return member;
  };

  route(app, deps, 'listMembers', async (request) => ({
    members: await deps.users.members(request.params.project),
  }));
  route(app, deps, 'setMemberRole', async (request) => {
    const { project, email } = request.params;
    const member = await memberOf(project, email);
    const { role } = request.body;
    checkOwnerChange(request.caller, project, member.role === 'owner' || role === 'owner');
    await deps.users.setRole(member.email, project, role);
    return memberOf(project, member.email);
  });
  route(app, deps, 'removeMember', async (request, reply) => {
    const { project, email } = request.params;
    const member = await memberOf(project, email);
    checkOwnerChange(request.caller, project, member.role === 'owner');
    await deps.users.removeMember(member.email, project);
    return reply.code(204).send();
  });
}
