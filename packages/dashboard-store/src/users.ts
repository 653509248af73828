// Dashboard users and what they may read: a user is an email, a password hash (none until the sign-in link
// is used) and the projects granted to them (`*`: every project). Sign-in links are one-time tokens (7
// days) that set the password; sessions are random tokens (30 days), stored by their hash only.
import { assertProjectId } from '@tally/tokens';
import { decoyPasswordHash, hashPassword, hashSecret, newSecret, verifyPassword } from './secrets.ts';
import type { StateStore } from './state-store.ts';

export interface User {
  email: string;
  password_hash: string | null;
  /** Projects the user may read and edit; `*` is every project. */
  projects: string[];
  created_at: string;
}

/** What a listing shows of a user (never the hash). */
export type UserSummary = Omit<User, 'password_hash'> & { has_password: boolean };

export const ALL_PROJECTS = '*';
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

export const mayRead = (user: Pick<User, 'projects'>, project: string): boolean =>
  user.projects.includes(ALL_PROJECTS) || user.projects.includes(project);

export class Users {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  async get(email: string): Promise<User | null> {
    return this.#store.get<User>('users', normaliseEmail(email));
  }

  async list(): Promise<UserSummary[]> {
    const users = await this.#store.list<User>('users');
    return users
      .map(({ password_hash, ...rest }) => ({ ...rest, has_password: password_hash !== null }))
      .sort((a, b) => a.email.localeCompare(b.email));
  }

  /** Adds a user granted `projects`; fails if the email is taken. */
  async add(email: string, projects: readonly string[]): Promise<User> {
    const normal = normaliseEmail(email);
    if (projects.length === 0)
      throw new UserError('grant at least one project (--project <id>, or --all-projects)');
    for (const p of projects) if (p !== ALL_PROJECTS) assertProjectId(p);
    if (await this.#store.get('users', normal)) throw new UserError('a user with this email exists');
    const user: User = {
      email: normal,
      password_hash: null,
      projects: [...new Set(projects)],
      created_at: new Date().toISOString(),
    };
    await this.#store.put('users', normal, user);
    return user;
  }

  async grant(email: string, projects: readonly string[]): Promise<User> {
    const user = await this.#required(email);
    for (const p of projects) if (p !== ALL_PROJECTS) assertProjectId(p);
    user.projects = [...new Set([...user.projects, ...projects])];
    await this.#store.put('users', user.email, user);
    return user;
  }

  async remove(email: string): Promise<boolean> {
    return this.#store.delete('users', normaliseEmail(email));
  }

  async setPassword(email: string, password: string): Promise<void> {
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new UserError(`a password has at least ${MIN_PASSWORD_LENGTH} characters`);
    const user = await this.#required(email);
    user.password_hash = await hashPassword(password);
    await this.#store.put('users', user.email, user);
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

  /** A one-time token for the link that sets the user's password (valid 7 days). */
  async createSignInLink(email: string): Promise<string> {
    const user = await this.#required(email);
    const token = newSecret('link_');
    await this.#store.put('sign_in_links', hashSecret(token), { email: user.email }, SIGN_IN_LINK_TTL_MS);
    return token;
  }

  /** Sets the password with a link's token (once); the user, or null for an unknown or used token. */
  async usePasswordLink(token: string, password: string): Promise<User | null> {
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new UserError(`a password has at least ${MIN_PASSWORD_LENGTH} characters`);
    const link = await this.#store.take<{ email: string }>('sign_in_links', hashSecret(token));
    if (!link) return null;
    const user = await this.get(link.email);
    if (!user) return null;
    user.password_hash = await hashPassword(password);
    await this.#store.put('users', user.email, user);
    return user;
  }

  async #required(email: string): Promise<User> {
    const user = await this.get(email);
    if (!user) throw new UserError('no user with this email');
    return user;
  }
}

/** Sessions of signed-in users: an opaque random token in the cookie, its hash in the store. */
export class Sessions {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  async create(email: string): Promise<string> {
    const token = newSecret('');
    await this.#store.put(
      'sessions',
      hashSecret(token),
      { email, created_at: new Date().toISOString() },
      SESSION_TTL_MS,
    );
    return token;
  }

  /** The session's email, or null for an unknown, ended or expired token. */
  async find(token: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    return (await this.#store.get<{ email: string }>('sessions', hashSecret(token)))?.email ?? null;
  }

  async end(token: string): Promise<void> {
    await this.#store.delete('sessions', hashSecret(token));
  }
}
