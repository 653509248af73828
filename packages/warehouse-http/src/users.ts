// The users of the HTTP interface. Two kinds, as on a ClickHouse server with two profiles:
//   - a writer (readonly=0): what the consumers' CLI tools and `tally migrate` use over HTTP;
//   - a read-only user (readonly=1, ClickHouse's semantics, enforced by the engine itself): SELECT, SHOW,
//     DESCRIBE, EXISTS, EXPLAIN and USE; no INSERT, ALTER, DROP, CREATE, TRUNCATE, OPTIMIZE, SYSTEM, no
//     table functions, and no change of any setting (SET, SETTINGS clauses and URL settings are refused
//     with READONLY, as ClickHouse does for such a user; clients read `system.settings.readonly` to know).
// Each user's queries run under limits the server sets and the user cannot change (execution time, memory,
// rows read, result size: ClickHouse's settings of those names), so that one query cannot take the
// process's memory or hold a slot for ever. Passwords are compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { TallyConfig } from '@tally/config';
import { HttpInterfaceError } from './errors.ts';

/** What one query of a user may use; 0 is no limit (ClickHouse's meaning of these settings). */
export interface QueryLimits {
  /** `max_execution_time`, in seconds. */
  maxExecutionTimeS: number;
  /** `max_memory_usage`, in bytes. */
  maxMemoryBytes: number;
  /** `max_rows_to_read`. */
  maxRowsToRead: number;
  /** `max_result_bytes` (the result before compression). */
  maxResultBytes: number;
}

export interface WarehouseHttpUser {
  name: string;
  password: string;
  /** ClickHouse's `readonly` level this user's queries run with: 0 (writer) or 1 (read-only). */
  readonly: 0 | 1;
  /** Limits of each of the user's queries (default: none). */
  limits?: Partial<QueryLimits>;
}

const MIB = 1024 * 1024;

/** The read-only analyst's limits, as configured (WAREHOUSE_ANALYST_*). */
export function analystLimits(config: TallyConfig): QueryLimits {
  return {
    maxExecutionTimeS: config.WAREHOUSE_ANALYST_MAX_EXECUTION_TIME_S,
    maxMemoryBytes: config.WAREHOUSE_ANALYST_MAX_MEMORY_MB * MIB,
    maxRowsToRead: config.WAREHOUSE_ANALYST_MAX_ROWS_TO_READ,
    maxResultBytes: config.WAREHOUSE_ANALYST_MAX_RESULT_MB * MIB,
  };
}

/** The writer's limits, as configured (WAREHOUSE_WRITER_*): time and memory; it reads and returns what it needs. */
export function writerLimits(config: TallyConfig): Partial<QueryLimits> {
  return {
    maxExecutionTimeS: config.WAREHOUSE_WRITER_MAX_EXECUTION_TIME_S,
    maxMemoryBytes: config.WAREHOUSE_WRITER_MAX_MEMORY_MB * MIB,
  };
}

/** The engine settings that carry a user's limits, set on each of its queries' connections. */
export function limitSettings(limits: Partial<QueryLimits> = {}): [string, number][] {
  const settings: [string, number][] = [];
  if (limits.maxExecutionTimeS) settings.push(['max_execution_time', limits.maxExecutionTimeS]);
  if (limits.maxMemoryBytes) settings.push(['max_memory_usage', limits.maxMemoryBytes]);
  if (limits.maxRowsToRead) settings.push(['max_rows_to_read', limits.maxRowsToRead]);
  if (limits.maxResultBytes) settings.push(['max_result_bytes', limits.maxResultBytes]);
  return settings;
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
