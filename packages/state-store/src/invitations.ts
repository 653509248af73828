// Invitations to a project (docs/design/roles.md): an owner or admin invites an email with a role; the
// invitation is a one-time token (the link's), stored by its hash only, valid 7 days. Accepting it once
// makes the invitee a member with that role: a new user sets their password with it; a user who already
// has one proves it is theirs with it (the link alone never adds a project to an existing account). The
// token is taken atomically (two accepts of one link: one wins). A newer invitation of the same email to
// the same project replaces the older one; an owner or admin revokes a pending one by its id.
import { randomBytes } from 'node:crypto';
import { hashSecret, newSecret } from './secrets.ts';
import type { StateStore } from './state-store.ts';
import {
  ALL_PROJECTS,
  isRole,
  MIN_PASSWORD_LENGTH,
  normaliseEmail,
  ROLES,
  type Role,
  roleOf,
  type User,
  UserError,
  type Users,
} from './users.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;
const INVITATIONS = 'invitations';

export interface Invitation {
  /** A public id (to list and revoke it), never the token. */
  id: string;
  project: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: string;
  expires_at: string;
}

/** As stored: with its key (the token's hash), so that a revocation by id can delete it. */
type Stored = Invitation & { key: string };

/** Why an invitation's token did not make a member. */
export type RefusedInvitation =
  | { refused: 'unknown' } // unknown, used, revoked or expired: one answer, so the token tells nothing
  | { refused: 'password' }; // the account exists and the password is not its own

export class Invitations {
  readonly #store: StateStore;
  readonly #users: Users;
  readonly #now: () => number;

  constructor(store: StateStore, users: Users, now: () => number = Date.now) {
    this.#store = store;
    this.#users = users;
    this.#now = now;
  }

  /**
   * Invites `email` to `project` with `role`; the invitation and its token (for the link). Refused for an
   * email that is a member already. An earlier pending invitation of the email to the project is revoked.
   */
  async create(
    project: string,
    email: string,
    role: Role,
    invitedBy: string,
  ): Promise<{ invitation: Invitation; token: string }> {
    const normal = normaliseEmail(email);
    if (!isRole(role)) throw new UserError(`a role is one of ${ROLES.join(', ')}`);
    const existing = await this.#users.get(normal);
    if (existing && roleOf(existing, project) !== null)
      throw new UserError(`${normal} is a member of ${project} already: change their role instead`);
    for (const earlier of await this.list(project))
      if (earlier.email === normal) await this.revoke(project, earlier.id);
    const token = newSecret('inv_');
    const now = this.#now();
    const invitation: Invitation = {
      id: randomBytes(9).toString('base64url'),
      project,
      email: normal,
      role,
      invited_by: invitedBy,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + INVITATION_TTL_MS).toISOString(),
    };
    const key = hashSecret(token);
    await this.#store.put<Stored>(INVITATIONS, key, { ...invitation, key }, INVITATION_TTL_MS);
    return { invitation, token };
  }

  /** The project's pending invitations, oldest first. */
  async list(project: string): Promise<Invitation[]> {
    return (await this.#pending(project)).map(({ key: _key, ...invitation }) => invitation);
  }

  /** Revokes a pending invitation of the project by its id; false when there is none. */
  async revoke(project: string, id: string): Promise<boolean> {
    const found = (await this.#pending(project)).find((i) => i.id === id);
    return found ? this.#store.delete(INVITATIONS, found.key) : false;
  }

  async #pending(project: string): Promise<Stored[]> {
    const all = await this.#store.list<Stored>(INVITATIONS);
    return all
      .filter((i) => i.project === project && this.#live(i))
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** What a token invites to, and whether its email has an account already; null when not valid. */
  async peek(token: string): Promise<(Invitation & { account_exists: boolean }) | null> {
    const stored = await this.#valid(token);
    if (!stored) return null;
    const { key: _key, ...invitation } = stored;
    const user = await this.#users.get(invitation.email);
    return { ...invitation, account_exists: !!user?.password_hash };
  }

  /**
   * Accepts the invitation once: the invitee becomes a member with the invited role (a new account's
   * password is set; an existing one's must match). The user, or why not.
   */
  async accept(token: string, password: string): Promise<User | RefusedInvitation> {
    const invitation = await this.#valid(token);
    if (!invitation) return { refused: 'unknown' };
    const existing = await this.#users.get(invitation.email);
    if (existing?.password_hash) {
      // Checked before the token is taken: a mistyped password does not use the link up.
      if (!(await this.#users.authenticate(invitation.email, password))) return { refused: 'password' };
    } else if (password.length < MIN_PASSWORD_LENGTH) {
      throw new UserError(`a password has at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    const taken = await this.#store.take<Invitation>(INVITATIONS, hashSecret(token));
    if (!taken || !this.#live(taken)) return { refused: 'unknown' };
    if (!existing) return this.#users.add(taken.email, [taken.project], password, taken.role);
    if (roleOf(existing, taken.project) === null && !existing.projects.includes(ALL_PROJECTS))
      await this.#users.grant(existing.email, [taken.project], taken.role);
    if (!existing.password_hash) await this.#users.setPassword(existing.email, password);
    return (await this.#users.get(existing.email)) as User;
  }

  async #valid(token: string): Promise<Stored | null> {
    if (!/^inv_[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const invitation = await this.#store.get<Stored>(INVITATIONS, hashSecret(token));
    return invitation && this.#live(invitation) ? invitation : null;
  }

  #live(invitation: Invitation): boolean {
    return Date.parse(invitation.expires_at) > this.#now();
  }
}
