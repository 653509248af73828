// Refused ingest requests counted per project, hour and status, for the dashboard's health view. On the
// request path only a Map increment, and only for a refusal whose project is known: a token the route
// verified (validation 400s, 403s, 413s and 503s after it), else a valid X-API-Token header (a 429 or a
// 413 answered before the body is read). A 401 has no project; neither has a refusal whose token is in a
// body never read. Every REFUSAL_FLUSH_MS, and at close, the counts go to the state store as one document
// per project and flush (RefusalCounts): each event loop (GATEWAY_WORKERS) flushes its own under its own
// id, so every loop's counts arrive. A flush that fails is kept and written again under the same id, so a
// write that succeeded though its answer was lost is not counted twice. Nothing of a request but its
// project and status is kept.
import { randomUUID } from 'node:crypto';
import type { RefusalCount } from '@tally/state-store';
import type { TokenVerifier } from '@tally/tokens';
import type { onResponseHookHandler } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The project of the token the ingest route verified ('' before, or if it refused the token). */
    projectId: string;
  }
}

/** Where flushes go: RefusalCounts over the state store, or a test's own. */
export interface RefusalSink {
  add(project: string, flushId: string, counts: readonly RefusalCount[]): Promise<void>;
}

/** Flushes kept while the store is away; beyond this the oldest are dropped (and a warning says so). */
const MAX_PENDING = 10_000;
/** How long close() waits for the last flush: a store that is away must not hold the shutdown up. */
const CLOSE_FLUSH_MS = 3000;
const HOUR_MS = 3_600_000;

export class RefusalCounter {
  readonly #sink: RefusalSink;
  readonly #flushMs: number;
  readonly #onWarning: (message: string, error?: unknown) => void;
  /** `project \0 hour \0 status` → count since the last flush. */
  #counts = new Map<string, number>();
  #pending: Array<{ project: string; flushId: string; counts: RefusalCount[] }> = [];
  readonly #instance = randomUUID();
  #sequence = 0;
  #chain: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;

  constructor(
    sink: RefusalSink,
    options: { flushMs: number; onWarning?: (message: string, error?: unknown) => void },
  ) {
    this.#sink = sink;
    this.#flushMs = options.flushMs;
    this.#onWarning = options.onWarning ?? (() => {});
  }

  count(project: string, status: number, at = Date.now()): void {
    const key = `${project}\u0000${Math.floor(at / HOUR_MS) * HOUR_MS}\u0000${status}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), this.#flushMs);
    this.#timer.unref();
  }

  /** Writes what was counted (and any flush that failed before); one flush at a time. */
  flush(): Promise<void> {
    this.#chain = this.#chain.then(() => this.#flushOnce());
    return this.#chain;
  }

  /** The last flush, waited for up to CLOSE_FLUSH_MS (then the counts not stored are lost, with a warning). */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), CLOSE_FLUSH_MS);
    });
    const outcome = await Promise.race([this.flush(), late]);
    clearTimeout(timer);
    if (outcome === 'late')
      this.#onWarning('refusal counts not stored at shutdown: the state store did not answer');
  }

  async #flushOnce(): Promise<void> {
    if (this.#counts.size > 0) {
      const counts = this.#counts;
      this.#counts = new Map();
      const flushId = `${this.#instance}:${this.#sequence++}`;
      const byProject = new Map<string, RefusalCount[]>();
      for (const [key, count] of counts) {
        const [project, hour, status] = key.split('\u0000') as [string, string, string];
        const list = byProject.get(project) ?? [];
        list.push({ hour: Number(hour), status: Number(status), count });
        byProject.set(project, list);
      }
      for (const [project, list] of byProject) this.#pending.push({ project, flushId, counts: list });
      if (this.#pending.length > MAX_PENDING) {
        this.#pending.splice(0, this.#pending.length - MAX_PENDING);
        this.#onWarning('refusal counts dropped: the state store has been unreachable for long');
      }
    }
    const pending = this.#pending;
    this.#pending = [];
    let failure: unknown = null;
    for (const flush of pending) {
      try {
        await this.#sink.add(flush.project, flush.flushId, flush.counts);
      } catch (error) {
        failure = error;
        this.#pending.push(flush);
      }
    }
    if (failure) this.#onWarning('refusal counts not stored; kept for the next flush', failure);
  }
}

/** The onResponse hook that counts a refused POST /api/ingest against its project, when it is known. */
export function countRefusals(
  counter: RefusalCounter,
  tokens: Pick<TokenVerifier, 'verify'>,
): onResponseHookHandler {
  return (request, reply, done) => {
    const status = reply.statusCode;
    if (status >= 400 && request.method === 'POST' && request.routeOptions.url === '/api/ingest') {
      let project = request.projectId;
      if (!project) {
        const header = request.headers['x-api-token'];
        if (typeof header === 'string' && header) project = tokens.verify(header)?.project_id ?? '';
      }
      if (project) counter.count(project, status);
    }
    done();
  };
}
