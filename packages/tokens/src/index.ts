// API tokens: `pub_`/`sec_` followed by 32 random base62 characters. Only a SHA-256 hash of a token is
// stored (tokens are long random strings, so a fast hash is enough). Two stores behind one interface
// (a JSON file in the data directory, or Redis), and a verifier that keeps an in-memory copy refreshed on
// change so that checking a token on the hot path costs no I/O.
import { hash, randomBytes } from 'node:crypto';

export { FileTokenStore } from './file-store.ts';
export { RedisTokenStore } from './redis-store.ts';

export type TokenKind = 'public' | 'secret';
export const TOKEN_PREFIX: Record<TokenKind, string> = { public: 'pub_', secret: 'sec_' };

/** What is stored of a token: never the token itself. */
export interface TokenInfo {
  /** Short id (start of the hash): lets `tally tokens revoke` take it instead of the token. */
  id: string;
  hash: string;
  project_id: string;
  kind: TokenKind;
  /** The token's first characters, to recognise it in a listing. */
  hint: string;
  created_at: string;
  revoked_at: string | null;
}

export interface TokenStore {
  /** Stores a new token for `projectId` and returns it: the only time the token itself is seen. */
  create(projectId: string, kind: TokenKind): Promise<{ token: string; info: TokenInfo }>;
  list(): Promise<TokenInfo[]>;
  /** Revokes by token or by id; false when no such token exists. */
  revoke(tokenOrId: string): Promise<boolean>;
  /** A value that changes whenever the tokens change; cheap to read. */
  version(): Promise<string>;
  close(): Promise<void>;
}

const TOKEN_PATTERN = /^(pub|sec)_[0-9A-Za-z]{32,96}$/;
const PROJECT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const isWellFormedToken = (token: string): boolean => TOKEN_PATTERN.test(token);
// crypto.hash is the one-shot form (no Hash object per call): every request hashes its token.
export const hashToken = (token: string): string => hash('sha256', token, 'hex');
export const tokenKindOf = (token: string): TokenKind | null =>
  token.startsWith('pub_') ? 'public' : token.startsWith('sec_') ? 'secret' : null;

export function assertProjectId(projectId: string): void {
  if (!PROJECT_PATTERN.test(projectId)) {
    throw new Error(
      'project id must be 1-64 characters of letters, digits, "_", "-" or ".", starting alphanumeric',
    );
  }
}

/** A new token: the kind's prefix and 32 base62 characters drawn without modulo bias (~190 bits). */
export function generateToken(kind: TokenKind): string {
  let body = '';
  while (body.length < 32) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && body.length < 32) body += BASE62[byte % 62]; // 248 = 4 × 62
    }
  }
  return TOKEN_PREFIX[kind] + body;
}

export function newTokenInfo(token: string, projectId: string, kind: TokenKind): TokenInfo {
  const hash = hashToken(token);
  return {
    id: hash.slice(0, 12),
    hash,
    project_id: projectId,
    kind,
    hint: `${token.slice(0, 8)}…`,
    created_at: new Date().toISOString(),
    revoked_at: null,
  };
}

/** Finds the token a `revoke` argument names: a full token (by its hash) or an id. */
export function matchesToken(info: TokenInfo, tokenOrId: string): boolean {
  return tokenKindOf(tokenOrId) ? info.hash === hashToken(tokenOrId) : info.id === tokenOrId;
}

export interface TokenSource {
  version(): Promise<string>;
  list(): Promise<TokenInfo[]>;
}

/**
 * Verifies tokens against an in-memory copy of a store, reloaded whenever the store's version changes
 * (checked every `refreshMs`), so a created or revoked token takes effect on every replica without a restart.
 * A well-formed token it does not know makes it check the store at once (at most every `missRefreshMs`),
 * so a token works from the first request after it was created.
 */
export class TokenVerifier {
  readonly #store: TokenSource;
  readonly #refreshMs: number;
  #byHash = new Map<string, TokenInfo>();
  #version: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #onError: (error: unknown) => void;
  readonly #missRefreshMs: number;
  #lastMissRefresh = Number.NEGATIVE_INFINITY;
  #missRefresh: Promise<void> | null = null;

  constructor(
    store: TokenSource,
    options: { refreshMs: number; missRefreshMs?: number; onError?: (error: unknown) => void },
  ) {
    this.#store = store;
    this.#refreshMs = options.refreshMs;
    this.#missRefreshMs = options.missRefreshMs ?? 250;
    this.#onError = options.onError ?? (() => {});
  }

  /** Loads the tokens once and starts refreshing them. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => {
      this.refresh().catch(this.#onError);
    }, this.#refreshMs);
    this.#timer.unref();
  }

  async refresh(): Promise<void> {
    const version = await this.#store.version();
    if (version === this.#version) return;
    const tokens = await this.#store.list();
    this.#byHash = new Map(tokens.filter((t) => !t.revoked_at).map((t) => [t.hash, t]));
    this.#version = version;
  }

  /** The active token's info, or null for a malformed, unknown or revoked token. */
  verify(token: string): TokenInfo | null {
    if (!isWellFormedToken(token)) return null;
    return this.#byHash.get(hashToken(token)) ?? null;
  }

  /**
   * As verify, but a well-formed token it does not know is checked again after reloading the store if it
   * changed (one check at a time, at most every `missRefreshMs`: unknown tokens cannot make it hammer the
   * store). A failed reload answers from what is loaded.
   */
  async verifyFresh(token: string): Promise<TokenInfo | null> {
    const known = this.verify(token);
    if (known || !isWellFormedToken(token)) return known;
    if (!this.#missRefresh) {
      if (performance.now() - this.#lastMissRefresh < this.#missRefreshMs) return null;
      this.#lastMissRefresh = performance.now();
      this.#missRefresh = this.refresh()
        .catch(this.#onError)
        .finally(() => {
          this.#missRefresh = null;
        });
    }
    await this.#missRefresh;
    return this.verify(token);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
