// The users of the HTTP interface. Two kinds, as on a ClickHouse server with two profiles:
//   - a writer (readonly=0): what the consumers' CLI tools and `tally migrate` use over HTTP;
//   - a read-only user (readonly=1, ClickHouse's semantics, enforced by the engine itself): SELECT, SHOW,
//     DESCRIBE, EXISTS, EXPLAIN and USE; no INSERT, ALTER, DROP, CREATE, TRUNCATE, OPTIMIZE, SYSTEM, no
//     table functions, and no change of any setting (SET, SETTINGS clauses and URL settings are refused
//     with READONLY, as ClickHouse does for such a user; clients read `system.settings.readonly` to know).
// Passwords are compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpInterfaceError } from './errors.ts';

export interface WarehouseHttpUser {
  name: string;
  password: string;
  /** ClickHouse's `readonly` level this user's queries run with: 0 (writer) or 1 (read-only). */
  readonly: 0 | 1;
}

const digest = (value: string) => createHash('sha256').update(value).digest();
/** Compared against when the name is unknown, so that an unknown name takes as long as a wrong password. */
const NOBODY = digest('');

export class HttpUsers {
  readonly #users: Map<string, { user: WarehouseHttpUser; digest: Buffer }>;

  constructor(users: readonly WarehouseHttpUser[]) {
    this.#users = new Map(users.map((user) => [user.name, { user, digest: digest(user.password) }]));
    if (this.#users.size !== users.length) throw new Error('two HTTP interface users have the same name');
  }

  /** The user these credentials name, or AUTHENTICATION_FAILED (the same answer for a bad name or password). */
  authenticate(name: string, password: string): WarehouseHttpUser {
    const entry = this.#users.get(name);
    const matches = timingSafeEqual(entry?.digest ?? NOBODY, digest(password));
    if (!entry || !matches) {
      throw new HttpInterfaceError(
        'AUTHENTICATION_FAILED',
        `${name.slice(0, 64)}: Authentication failed: password is incorrect, or there is no user with such name`,
      );
    }
    return entry.user;
  }
}
