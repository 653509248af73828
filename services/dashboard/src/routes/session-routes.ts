// Signing in and out, and setting a password with a sign-in link. The session is an opaque random token in
// an HttpOnly, SameSite=Lax cookie (Secure when the request came over HTTPS), stored hashed. Attempts are
// limited per client address (the route's rate limit, dashboard.ts) and slowed per (client address,
// account) pair: after failures, that pair waits (deps.signInFailures), never the account from another
// address. Setting a password ends the user's other sessions; the answer signs this browser in anew.
// "Forgot password" mails a sign-in link when SMTP is configured, answering alike for any email.
import { passwordLinkMessage } from '@tally/mail';
import {
  normaliseEmail,
  rolesOf,
  SESSION_TTL_MS,
  type Sessions,
  type User,
  UserError,
} from '@tally/state-store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../access.ts';
import { type DashboardDeps, linkTo } from '../deps.ts';
import { BadRequestError, TooManyAttemptsError, UnauthorizedError } from '../errors.ts';
import { route } from './route.ts';

/** What the web app knows of a signed-in user: email, projects and the role in each. */
export function sessionInfo(user: User) {
  return { user: { email: user.email }, projects: user.projects, roles: rolesOf(user) };
}

export async function signedIn(reply: FastifyReply, request: FastifyRequest, sessions: Sessions, user: User) {
  const token = await sessions.create(user.email);
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    maxAge: SESSION_TTL_MS / 1000,
  });
  return sessionInfo(user);
}

export function sessionRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'getSession', async (request) => {
    const caller = request.caller;
    if (caller.kind !== 'user') throw new UnauthorizedError();
    return sessionInfo(caller.user);
  });

  route(app, deps, 'signIn', async (request, reply) => {
    const { email, password } = request.body;
    // Refused before the password is checked: a guess while the pair waits tells nothing.
    const wait = await deps.signInFailures.wait(request.ip, email);
    if (wait > 0) throw new TooManyAttemptsError(Math.ceil(wait / 1000));
    const user = await deps.users.authenticate(email, password);
    if (!user) {
      await deps.signInFailures.fail(request.ip, email);
      throw new UnauthorizedError('Invalid email or password');
    }
    await deps.signInFailures.succeed(request.ip, email);
    return signedIn(reply, request, deps.sessions, user);
  });

  route(app, deps, 'signOut', async (request, reply) => {
    const token = request.cookies?.[SESSION_COOKIE];
    if (token) await deps.sessions.end(token);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send();
  });

  route(app, deps, 'setPassword', async (request, reply) => {
    const { token, password } = request.body;
    if (password.length < 10) throw new BadRequestError('password must have at least 10 characters');
    const user = await deps.users.usePasswordLink(token, password);
    if (!user) throw new UnauthorizedError('This sign-in link is unknown, used or expired');
    return signedIn(reply, request, deps.sessions, user);
  });

  // "Forgot password": the same answer whether the account exists or not; at most one mail per account
  // every RESET_MAIL_INTERVAL_MS (Users.resetLink: replicas agree), so that nobody floods an inbox.
  route(app, deps, 'requestPasswordReset', async (request, reply) => {
    const mailer = deps.mailer;
    if (!mailer?.configured) return reply.code(202).send({ emailed: false });
    let email: string;
    try {
      email = normaliseEmail(request.body.email);
    } catch (error) {
      if (error instanceof UserError) return reply.code(202).send({ emailed: true });
      throw error;
    }
    const token = await deps.users.resetLink(email, RESET_MAIL_INTERVAL_MS);
    if (token) {
      try {
        await mailer.send(passwordLinkMessage(email, linkTo(deps, `/set-password#token=${token}`)));
      } catch (error) {
        // Logged, not answered: the answer must not tell that the account exists.
        request.log.warn({ err: error }, 'password reset: the link could not be mailed');
      }
    }
    return reply.code(202).send({ emailed: true });
  });
}

/** At most one "forgot password" mail per account in this time. */
export const RESET_MAIL_INTERVAL_MS = 5 * 60_000;
