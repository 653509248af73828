// Signing in and out, and setting a password with a sign-in link. The session is an opaque random token in
// an HttpOnly, SameSite=Lax cookie (Secure when the request came over HTTPS), stored hashed. Attempts are
// limited per client address (the route's rate limit) and per account (failures counted here).
import type { Sessions, User } from '@tally/dashboard-store';
import { hashSecret, SESSION_TTL_MS } from '@tally/dashboard-store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../access.ts';
import type { DashboardDeps } from '../deps.ts';
import { BadRequestError, TooManyAttemptsError, UnauthorizedError } from '../errors.ts';
import { route } from './route.ts';

/** Failed sign-ins per account within the window before the account's sign-in waits (in this process). */
export const ACCOUNT_ATTEMPTS = 10;
const WINDOW_MS = 15 * 60_000;

/** Failures per account (keyed by the email's hash), bounded in size so that it cannot grow without limit. */
class FailedAttempts {
  readonly #failures = new Map<string, { count: number; since: number }>();
  blocked(email: string): number {
    const entry = this.#failures.get(hashSecret(email));
    if (!entry || Date.now() - entry.since > WINDOW_MS) return 0;
    return entry.count >= ACCOUNT_ATTEMPTS ? Math.ceil((entry.since + WINDOW_MS - Date.now()) / 1000) : 0;
  }
  fail(email: string): void {
    const key = hashSecret(email);
    const entry = this.#failures.get(key);
    if (!entry || Date.now() - entry.since > WINDOW_MS) {
      if (this.#failures.size >= 100_000) this.#failures.clear();
      this.#failures.set(key, { count: 1, since: Date.now() });
    } else entry.count++;
  }
  succeed(email: string): void {
    this.#failures.delete(hashSecret(email));
  }
}

async function signedIn(reply: FastifyReply, request: FastifyRequest, sessions: Sessions, user: User) {
  const token = await sessions.create(user.email);
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    maxAge: SESSION_TTL_MS / 1000,
  });
  return { user: { email: user.email }, projects: user.projects };
}

export function sessionRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const failures = new FailedAttempts();

  route(app, deps, 'getSession', async (request) => {
    const caller = request.caller;
    if (caller.kind !== 'user') throw new UnauthorizedError();
    return { user: { email: caller.user.email }, projects: caller.user.projects };
  });

  route(app, deps, 'signIn', async (request, reply) => {
    const { email, password } = request.body as { email: string; password: string };
    const key = email.trim().toLowerCase();
    const wait = failures.blocked(key);
    if (wait > 0) throw new TooManyAttemptsError(wait);
    const user = await deps.users.authenticate(email, password);
    if (!user) {
      failures.fail(key);
      throw new UnauthorizedError('Invalid email or password');
    }
    failures.succeed(key);
    return signedIn(reply, request, deps.sessions, user);
  });

  route(app, deps, 'signOut', async (request, reply) => {
    const token = request.cookies?.[SESSION_COOKIE];
    if (token) await deps.sessions.end(token);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send();
  });

  route(app, deps, 'setPassword', async (request, reply) => {
    const { token, password } = request.body as { token: string; password: string };
    if (password.length < 10) throw new BadRequestError('password must have at least 10 characters');
    const user = await deps.users.usePasswordLink(token, password);
    if (!user) throw new UnauthorizedError('This sign-in link is unknown, used or expired');
    return signedIn(reply, request, deps.sessions, user);
  });
}
