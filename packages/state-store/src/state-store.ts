// The state store: small JSON documents in named collections (users, sessions, links, share links,
// project settings, goals, funnels, refusal counts), some with an expiry. One interface, two backends as for
// the tokens: LMDB in TALLY_DATA_DIR (lmdb-store.ts: transactional, safe for the server and the CLI at
// once) or Redis when REDIS_URL is set (redis-store.ts: shared by every replica).

export interface StateStore {
  /** The document, or null when absent or expired. */
  get<T>(collection: string, key: string): Promise<T | null>;
  /** Writes the document; it disappears after `ttlMs` when given. */
  put<T>(collection: string, key: string, value: T, ttlMs?: number): Promise<void>;
  /** Removes the document; false when there was none. */
  delete(collection: string, key: string): Promise<boolean>;
  /** Reads and removes the document at once: two callers never both get it (one-time links). */
  take<T>(collection: string, key: string): Promise<T | null>;
  /**
   * Writes the document only when no live one is at the key, atomically: of several claimers (processes,
   * replicas) exactly one gets true. A lease or a "done" marker; it disappears after `ttlMs` when given.
   */
  claim<T>(collection: string, key: string, value: T, ttlMs?: number): Promise<boolean>;
  /** Every live document of the collection. */
  list<T>(collection: string): Promise<T[]>;
  close(): Promise<void>;
}

/** A stored document with its expiry (ms since the epoch; null: none). */
export interface Stored<T> {
  value: T;
  expires_at: number | null;
}

export const isLive = (stored: Stored<unknown> | undefined | null, now = Date.now()): boolean =>
  !!stored && (stored.expires_at === null || stored.expires_at > now);
