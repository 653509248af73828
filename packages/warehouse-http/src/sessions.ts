// ClickHouse's HTTP sessions (`session_id`): what a session's SET and USE statements change lasts for the
// session's later queries, until `session_timeout` seconds (default 60, at most 3600) pass without a
// query; one query at a time per session (a second gets SESSION_IS_LOCKED); sessions are per user, so
// one user cannot enter another's. Settings, parameters and the database given with a request (URL,
// headers) last for that request only, as on a server.
// chDB gives each connection its own settings, current database and parameters, and a fresh connection
// costs about a millisecond, so every request runs on a fresh connection: a session is kept here as the
// SET/USE statements it ran, replayed on the next request's connection. Temporary tables are connection
// state that cannot be replayed, so the executor refuses CREATE TEMPORARY TABLE in a session.
import { HttpInterfaceError } from './errors.ts';

export const DEFAULT_SESSION_TIMEOUT_S = 60;
export const MAX_SESSION_TIMEOUT_S = 3600;
/** SET/USE statements a session may hold: every request replays them all. */
const MAX_STATEMENTS = 1000;

export interface NamedSession {
  readonly key: string;
  /** The SET and USE statements the session ran, in order. */
  readonly statements: string[];
  timeoutMs: number;
  busy: boolean;
  timer: NodeJS.Timeout | null;
}

export class SessionRegistry {
  readonly #sessions = new Map<string, NamedSession>();
  readonly #maxSessions: number;

  constructor(maxSessions = 1000) {
    this.#maxSessions = maxSessions;
  }

  /** Takes the session (created unless `check`), locked for one request; release() gives it back. */
  acquire(user: string, id: string, timeoutS: number | null, check: boolean): NamedSession {
    if (timeoutS !== null && timeoutS > MAX_SESSION_TIMEOUT_S) {
      throw new HttpInterfaceError(
        'INVALID_SESSION_TIMEOUT',
        `Session timeout '${timeoutS}' is larger than max_session_timeout: ${MAX_SESSION_TIMEOUT_S}. ` +
          'Maximum session timeout could be modified in configuration file',
      );
    }
    const key = `${user}\u0000${id}`;
    let session = this.#sessions.get(key);
    if (!session) {
      if (check) throw new HttpInterfaceError('SESSION_NOT_FOUND', `Session ${id.slice(0, 100)} not found`);
      if (this.#sessions.size >= this.#maxSessions) {
        throw new HttpInterfaceError(
          'TOO_MANY_SIMULTANEOUS_QUERIES',
          `Too many sessions (${this.#maxSessions}); close some or wait for their timeout`,
        );
      }
      session = {
        key,
        statements: [],
        timeoutMs: DEFAULT_SESSION_TIMEOUT_S * 1000,
        busy: false,
        timer: null,
      };
      this.#sessions.set(key, session);
    }
    if (session.busy) {
      throw new HttpInterfaceError(
        'SESSION_IS_LOCKED',
        `Session ${id.slice(0, 100)} is locked by a concurrent client`,
      );
    }
    session.busy = true;
    if (session.timer) clearTimeout(session.timer);
    session.timer = null;
    if (timeoutS !== null) session.timeoutMs = timeoutS * 1000;
    return session;
  }

  /** Records a SET or USE the session ran, so that its later requests replay it. */
  record(session: NamedSession, sql: string): void {
    if (session.statements.length >= MAX_STATEMENTS) {
      throw new HttpInterfaceError(
        'BAD_ARGUMENTS',
        `A session may hold at most ${MAX_STATEMENTS} SET and USE statements`,
      );
    }
    session.statements.push(sql);
  }

  release(session: NamedSession): void {
    session.busy = false;
    const timer = setTimeout(() => {
      if (!session.busy) this.#sessions.delete(session.key);
    }, session.timeoutMs);
    timer.unref();
    session.timer = timer;
  }

  get size(): number {
    return this.#sessions.size;
  }

  close(): void {
    for (const session of this.#sessions.values()) if (session.timer) clearTimeout(session.timer);
    this.#sessions.clear();
  }
}
