// Who is calling and what they may read. Credentials, in this order: `Authorization: Bearer` with a read
// key (read_…: its one project), a share link (shr_…, when it has no password) or a share grant (shg_…:
// the link's project, revenue only when included); else the session cookie of a signed-in user (the
// projects granted to them). Another project's data is never readable with a key, link or user of one:
// every operation that names a project checks it here (Operation.access, operations.ts). What changes a
// project (access `editor`) is for its signed-in owners and admins only; a viewer reads (docs/design/roles.md).
import {
  mayManage,
  mayRead,
  type Sessions,
  type ShareLink,
  type ShareLinks,
  type User,
} from '@tally/state-store';
import type { TokenVerifier } from '@tally/tokens';
import type { FastifyRequest } from 'fastify';
import type { Access } from './api/operations.ts';
import { ForbiddenError, UnauthorizedError } from './errors.ts';

export const SESSION_COOKIE = 'tally_session';

export type Caller =
  | { kind: 'none' }
  | { kind: 'read_key'; project: string }
  | { kind: 'share'; share: ShareLink }
  | { kind: 'user'; user: User; session: string };

export interface AccessDeps {
  readKeys: Pick<TokenVerifier, 'verify' | 'verifyFresh'>;
  sessions: Sessions;
  shares: ShareLinks;
}

/** The caller of a request, from its credentials; an invalid credential is refused, never ignored. */
export async function callerOf(request: FastifyRequest, deps: AccessDeps): Promise<Caller> {
  const authorization = request.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S{1,200})$/i.exec(authorization);
    if (!match) throw new UnauthorizedError();
    const credential = match[1] as string;
    if (credential.startsWith('read_')) {
      const key = deps.readKeys.verify(credential) ?? (await deps.readKeys.verifyFresh(credential));
      if (!key || key.kind !== 'read') throw new UnauthorizedError();
      return { kind: 'read_key', project: key.project_id };
    }
    if (credential.startsWith('shr_')) {
      const share = await deps.shares.findByToken(credential);
      // A link with a password is opened with it (POST …/unlock); the token alone is not enough.
      if (!share || share.password_hash) throw new UnauthorizedError();
      return { kind: 'share', share };
    }
    if (credential.startsWith('shg_')) {
      const share = await deps.shares.findByGrant(credential);
      if (!share) throw new UnauthorizedError();
      return { kind: 'share', share };
    }
    throw new UnauthorizedError();
  }
  const session = request.cookies?.[SESSION_COOKIE];
  if (session) {
    const user = await deps.sessions.find(session);
    // A session of a removed user, an expired one, or one from before the user's password changed is no
    // credential (the cookie is cleared on sign-out).
    if (user) return { kind: 'user', user, session };
  }
  return { kind: 'none' };
}

/** Whether the caller may read `project` at all. */
export function canRead(caller: Caller, project: string): boolean {
  switch (caller.kind) {
    case 'read_key':
      return caller.project === project;
    case 'share':
      return caller.share.project === project;
    case 'user':
      return mayRead(caller.user, project);
    default:
      return false;
  }
}

/** Refuses the request unless the caller may do an operation of this access on `project`. */
export function authorise(caller: Caller, access: Access, project: string | undefined): void {
  if (access === 'public') return;
  if (caller.kind === 'none') throw new UnauthorizedError();
  if (access === 'user') {
    if (caller.kind !== 'user') throw new UnauthorizedError();
    return;
  }
  if (project === undefined || !canRead(caller, project)) throw new ForbiddenError();
  if (access === 'editor' && (caller.kind !== 'user' || !mayManage(caller.user, project))) {
    throw new ForbiddenError();
  }
  if (access === 'member' && caller.kind !== 'user') throw new ForbiddenError();
  // Ingestion health is for the people who run the project, not for the public of a share link.
  if (access === 'operator' && caller.kind === 'share') throw new ForbiddenError();
  if (access === 'revenue' && caller.kind === 'share' && !caller.share.include_revenue) {
    throw new ForbiddenError('Revenue is not shared');
  }
}

/** Whether the caller may read revenue of a project it may read. */
export const canReadRevenue = (caller: Caller): boolean =>
  caller.kind !== 'share' || caller.share.include_revenue;
