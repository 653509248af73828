// Invitations (docs/design/roles.md): a project's owners and admins invite an email with a role (only an
// owner invites an owner), list and revoke pending invitations; the invitee opens the mailed link (or the
// one the inviter passed on when no SMTP server is configured), sees what it invites to, and accepts it
// once, signed in by the answer. The token travels in request bodies only, never in a URL.
import { invitationMessage, MailDeliveryError } from '@tally/mail';
import { roleOf } from '@tally/state-store';
import type { FastifyInstance } from 'fastify';
import { type DashboardDeps, linkTo } from '../deps.ts';
import { ForbiddenError, NotFoundError, TooManyAttemptsError, UnauthorizedError } from '../errors.ts';
import { route } from './route.ts';
import { signedIn } from './session-routes.ts';

const UNKNOWN_LINK = 'This invitation link is unknown, used, revoked or expired';

export function invitationRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'listInvitations', async (request) => ({
    invitations: await deps.invitations.list(request.params.project),
  }));

  route(app, deps, 'createInvitation', async (request, reply) => {
    const { project } = request.params;
    const { email, role } = request.body;
    const caller = request.caller;
    if (caller.kind !== 'user') throw new ForbiddenError(); // access `editor` lets only users here
    if (role === 'owner' && roleOf(caller.user, project) !== 'owner')
      throw new ForbiddenError('Only an owner makes, changes or removes an owner');
    const { invitation, token } = await deps.invitations.create(project, email, role, caller.user.email);
    const link = linkTo(deps, `/invite#token=${token}`);
    let emailed = false;
    if (deps.mailer?.configured) {
      try {
        emailed = (await deps.mailer.send(invitationMessage(invitation.email, invitation, link))).sent;
      } catch (error) {
        if (!(error instanceof MailDeliveryError)) throw error;
        // The inviter gets the link to pass on instead; the log says why it was not mailed.
        request.log.warn({ err: error }, 'invitation: the link could not be mailed');
      }
    }
    return reply.code(201).send({ invitation, emailed, link: emailed ? null : link });
  });

  route(app, deps, 'revokeInvitation', async (request, reply) => {
    const { project, id } = request.params;
    if (!(await deps.invitations.revoke(project, id))) throw new NotFoundError('no such invitation');
    return reply.code(204).send();
  });

  route(app, deps, 'viewInvitation', async (request) => {
    const found = await deps.invitations.peek(request.body.token);
    if (!found) throw new UnauthorizedError(UNKNOWN_LINK);
    const { project, email, role, invited_by, expires_at, account_exists } = found;
    return { project, email, role, invited_by, expires_at, account_exists };
  });

  route(app, deps, 'acceptInvitation', async (request, reply) => {
    const { token, password } = request.body;
    // An existing account's password is guessed no faster here than at sign-in: the same per (address,
    // account) wait.
    const email = (await deps.invitations.peek(token))?.email;
    if (email) {
      const wait = await deps.signInFailures.wait(request.ip, email);
      if (wait > 0) throw new TooManyAttemptsError(Math.ceil(wait / 1000));
    }
    const accepted = await deps.invitations.accept(token, password);
    if ('refused' in accepted) {
      if (accepted.refused === 'password' && email) await deps.signInFailures.fail(request.ip, email);
      throw new UnauthorizedError(
        accepted.refused === 'password' ? 'Invalid email or password' : UNKNOWN_LINK,
      );
    }
    if (email) await deps.signInFailures.succeed(request.ip, email);
    return signedIn(reply, request, deps.sessions, accepted);
  });
}
