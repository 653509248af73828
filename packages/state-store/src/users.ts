// Dashboard users and what they may read: a user is an email, a password hash (none until the sign-in link
// is used) and the projects granted to them (`*`: every project). Sign-in links are one-time tokens (7
// days) that set the password; sessions are random tokens (30 days), stored by their hash only.
// A user has one sign-in link at most: issuing one revokes the one before, using it (or setting the
// password otherwise) revokes it. A session holds its user's session stamp, a random value that a password
// change (or removing the user and adding them again) replaces: the sessions from before end at once.
// Each project a user belongs to gives them a role there (owner, admin, viewer; docs/design/roles.md):
// `roles` maps the project to it. A user stored before roles existed has no `roles`, and is owner of each
// project they were granted (they could change everything there); `*` is owner of every project. A project
// always keeps an owner: its last one can be neither demoted nor removed.
import { assertProjectId } from '@tally/tokens';
import { decoyPasswordHash, hashPassword, hashSecret, newSecret, verifyPassword } from './secrets.ts';
import type { StateStore } from './state-store.ts';

export interface User {
  email: string;
  password_hash: string | null;
  /** Projects the user belongs to; `*` is every project (as owner). */
  projects: string[];
  /**
   * The user's role in each of their projects. Absent (a user stored before roles), or a project missing
   * from it: owner (roleOf).
   */
  roles?: Record<string, Role>;
  created_at: string;
  /**
   * The hash of the user's one valid sign-in link (null: none). Absent on a user stored before links were
   * revoked: any of their links is then valid once, until a new one is issued or the password is set.
   */
  sign_in_link?: string | null;
  /**
   * What the user's sessions must hold to be valid; replaced when the password changes. Absent on a user
   * stored before it existed (their sessions, holding none, stay valid until the password changes).
   */
  session_stamp?: string;
}

/** What a listing shows of a user (never a hash or the session stamp). */
export type UserSummary = Omit<User, 'password_hash' | 'sign_in_link' | 'session_stamp'> & {
  has_password: boolean;
};

export const ALL_PROJECTS = '*';
/** A member's roles, from the most to the least power. */
export const ROLES = ['owner', 'admin', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** The user's role in `project`, or null when they are not a member. */
export function roleOf(user: Pick<User, 'projects' | 'roles'>, project: string): Role | null {
  if (user.projects.includes(ALL_PROJECTS)) return 'owner';
  if (!user.projects.includes(project)) return null;
  return user.roles?.[project] ?? 'owner';
}
/** The user's role in each project they belong to, written out (a stored user may lack some); `*` left out. */
export function rolesOf(user: Pick<User, 'projects' | 'roles'>): Record<string, Role> {
  const roles: Record<string, Role> = {};
  for (const p of user.projects) {
    const role = roleOf(user, p);
    if (p !== ALL_PROJECTS && role) roles[p] = role;
  }
  return roles;
}
export const SIGN_IN_LINK_TTL_MS = 7 * 24 * 3_600_000;
export const SESSION_TTL_MS = 30 * 24 * 3_600_000;
export const MIN_PASSWORD_LENGTH = 10;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

export function normaliseEmail(email: string): string {
  const normal = email.trim().toLowerCase();
  if (!EMAIL.test(normal)) throw new UserError('not an email address');
  return normal;
}

function assertPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new UserError(`a password has at least ${MIN_PASSWORD_LENGTH} characters`);
}

const USERS = 'users';
const SIGN_IN_LINKS = 'sign_in_links';
const SESSIONS = 'sessions';
const RESET_LINKS = 'password_reset_links';

export const mayRead = (user: Pick<User, 'projects'>, project: string): boolean =>
  user.projects.includes(ALL_PROJECTS) || user.projects.includes(project);

/** Whether the user may change `project`'s settings, goals, shares, tokens and members: owner or admin. */
export const mayManage = (user: Pick<User, 'projects' | 'roles'>, project: string): boolean => {
  const role = roleOf(user, project);
  return role === 'owner' || role === 'admin';
};

export class Users {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  async get(email: string): Promise<User | null> {
    return this.#store.get<User>(USERS, normaliseEmail(email));
  }

  async list(): Promise<UserSummary[]> {
    const users = await this.#store.list<User>(USERS);
    return users
      .map(({ password_hash, sign_in_link: _link, session_stamp: _stamp, ...rest }) => ({
        ...rest,
        roles: rolesOf(rest),
        has_password: password_hash !== null,
      }))
      .sort((a, b) => a.email.localeCompare(b.email));
  }

  /**
   * Adds a user granted `projects`, with `password` when given; fails if the email is taken. Everything is
   * checked before anything is written: a refused user is not half added.
   */
  async add(
    email: string,
    projects: readonly string[],
    password?: string,
    role: Role = 'owner',
  ): Promise<User> {
    const normal = normaliseEmail(email);
    if (!isRole(role)) throw new UserError(`a role is one of ${ROLES.join(', ')}`);
    if (projects.length === 0)
      throw new UserError('grant at least one project (--project <id>, or --all-projects)');
    for (const p of projects) if (p !== ALL_PROJECTS) assertProjectId(p);
    if (password !== undefined) assertPassword(password);
    if (await this.#store.get(USERS, normal)) throw new UserError('a user with this email exists');
    const user: User = {
      email: normal,
      password_hash: password === undefined ? null : await hashPassword(password),
      projects: [...new Set(projects)],
      roles: Object.fromEntries(projects.filter((p) => p !== ALL_PROJECTS).map((p) => [p, role])),
      created_at: new Date().toISOString(),
      sign_in_link: null,
      // A new stamp: the sessions of a removed user of the same email stay ended.
      session_stamp: newSecret(''),
    };
    await this.#store.put(USERS, normal, user);
    return user;
  }

  /** Makes the user a member of `projects` with `role` (a project they already belong to keeps its role). */
  async grant(email: string, projects: readonly string[], role: Role = 'owner'): Promise<User> {
    const user = await this.#required(email);
    if (!isRole(role)) throw new UserError(`a role is one of ${ROLES.join(', ')}`);
    for (const p of projects) if (p !== ALL_PROJECTS) assertProjectId(p);
    const roles = rolesOf(user);
    for (const p of projects) if (p !== ALL_PROJECTS && !user.projects.includes(p)) roles[p] = role;
    user.projects = [...new Set([...user.projects, ...projects])];
    user.roles = roles;
    await this.#store.put(USERS, user.email, user);
    return user;
  }

  /** The members of `project` with their roles (`*` users as owners), by email. */
  async members(project: string): Promise<{ email: string; role: Role; has_password: boolean }[]> {
    const members = [];
    for (const user of await this.list()) {
      const role = roleOf(user, project);
      if (role) members.push({ email: user.email, role, has_password: user.has_password });
    }
    return members;
  }

  /**
   * Changes a member's role in `project`. Refused for a user who is not a member, for one whose power
   * covers every project (`*`), and for the project's last owner (a project always keeps an owner).
   */
  async setRole(email: string, project: string, role: Role): Promise<User> {
    if (!isRole(role)) throw new UserError(`a role is one of ${ROLES.join(', ')}`);
    const user = await this.#required(email);
    const current = roleOf(user, project);
    if (current === null) throw new UserError(`${user.email} is not a member of ${project}`);
    if (user.projects.includes(ALL_PROJECTS))
      throw new UserError(`${user.email} is owner of every project (--all-projects); that role stays`);
    if (current === 'owner' && role !== 'owner') await this.#assertAnotherOwner(user.email, project);
    user.roles = { ...rolesOf(user), [project]: role };
    await this.#store.put(USERS, user.email, user);
    return user;
  }

  /** Takes `project` away from a member (refused for the project's last owner); false if not a member. */
  async removeMember(email: string, project: string): Promise<boolean> {
    const user = await this.get(email);
    if (!user || !user.projects.includes(project)) return false;
    if (roleOf(user, project) === 'owner') await this.#assertAnotherOwner(user.email, project);
    const roles = rolesOf(user);
    delete roles[project];
    user.projects = user.projects.filter((p) => p !== project);
    user.roles = roles;
    await this.#store.put(USERS, user.email, user);
    return true;
  }

  async #assertAnotherOwner(email: string, project: string): Promise<void> {
    const owners = (await this.members(project)).filter((m) => m.role === 'owner' && m.email !== email);
    if (owners.length === 0)
      throw new UserError(`${email} is the last owner of ${project}: make another member owner first`);
  }

  async remove(email: string): Promise<boolean> {
    return this.#store.delete(USERS, normaliseEmail(email));
  }

  /** Sets the password: the user's sessions end and their sign-in link is revoked. */
  async setPassword(email: string, password: string): Promise<void> {
    assertPassword(password);
    await this.#changePassword(await this.#required(email), password);
  }

  /** The user when the password is theirs; null otherwise (the same time for an unknown email). */
  async authenticate(email: string, password: string): Promise<User | null> {
    let user: User | null = null;
    try {
      user = await this.get(email);
    } catch {
      user = null;
    }
    const ok = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash()));
    return ok && user?.password_hash ? user : null;
  }

  /**
   * A one-time token for the link that sets the user's password (valid 7 days). It revokes the user's
   * link before it: only the newest link works.
   */
  async createSignInLink(email: string): Promise<string> {
    const user = await this.#required(email);
    const token = newSecret('link_');
    const previous = user.sign_in_link;
    await this.#store.put(SIGN_IN_LINKS, hashSecret(token), { email: user.email }, SIGN_IN_LINK_TTL_MS);
    user.sign_in_link = hashSecret(token);
    await this.#store.put(USERS, user.email, user);
    if (previous) await this.#store.delete(SIGN_IN_LINKS, previous);
    return token;
  }

  /**
   * A sign-in link for "forgot password": null when the email has no account, or when one was made this
   * way for it within `intervalMs` (an atomic claim: of several replicas, one makes it).
   */
  async resetLink(email: string, intervalMs: number): Promise<string | null> {
    const user = await this.get(email);
    if (!user) return null;
    if (!(await this.#store.claim(RESET_LINKS, user.email, true, intervalMs))) return null;
    return this.createSignInLink(user.email);
  }

  /**
   * Sets the password with a link's token (once); the user, or null for an unknown, used, revoked or
   * expired token. The user's link is revoked and their sessions end.
   */
  async usePasswordLink(token: string, password: string): Promise<User | null> {
    assertPassword(password);
    const hash = hashSecret(token);
    const link = await this.#store.take<{ email: string }>(SIGN_IN_LINKS, hash);
    if (!link) return null;
    const user = await this.get(link.email);
    // The user's one valid link is the newest (`undefined`: a user stored before links were revoked).
    if (!user || (user.sign_in_link !== undefined && user.sign_in_link !== hash)) return null;
    return this.#changePassword(user, password);
  }

  async #changePassword(user: User, password: string): Promise<User> {
    const previous = user.sign_in_link;
    user.password_hash = await hashPassword(password);
    user.sign_in_link = null;
    user.session_stamp = newSecret('');
    await this.#store.put(USERS, user.email, user);
    if (previous) await this.#store.delete(SIGN_IN_LINKS, previous);
    return user;
  }

  async #required(email: string): Promise<User> {
    const user = await this.get(email);
    if (!user) throw new UserError('no user with this email');
    return user;
  }
}

interface StoredSession {
  email: string;
  created_at: string;
  /** The user's session stamp when the session began (absent: a user stored before stamps existed). */
  stamp?: string;
}

/**
 * Sessions of signed-in users: an opaque random token in the cookie, its hash in the store. A session is
 * valid while its user exists with the stamp it began with (a password change replaces the stamp).
 */
export class Sessions {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** A new session of the user (as stored now, so that it holds the current stamp). */
  async create(email: string): Promise<string> {
    const normal = normaliseEmail(email);
    const user = await this.#store.get<User>(USERS, normal);
    if (!user) throw new UserError('no user with this email');
    const token = newSecret('');
    const session: StoredSession = {
      email: user.email,
      created_at: new Date().toISOString(),
      ...(user.session_stamp === undefined ? {} : { stamp: user.session_stamp }),
    };
    await this.#store.put(SESSIONS, hashSecret(token), session, SESSION_TTL_MS);
    return token;
  }

  /**
   * The session's user, or null for an unknown, ended or expired token, a removed user, or a session from
   * before the user's password changed.
   */
  async find(token: string): Promise<User | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const session = await this.#store.get<StoredSession>(SESSIONS, hashSecret(token));
    if (!session) return null;
    const user = await this.#store.get<User>(USERS, session.email);
    return user && user.session_stamp === session.stamp ? user : null;
  }

  async end(token: string): Promise<void> {
    await this.#store.delete(SESSIONS, hashSecret(token));
  }
}
