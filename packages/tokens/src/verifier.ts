// TokenVerifier: checks tokens against an in-memory copy of a store, refreshed when the store changes,
// so that checking a token on the hot path costs no I/O.
import {
  hashToken,
  isWellFormedToken,
  type ProjectAccess,
  type TokenInfo,
  type TokenKind,
  tokenKindOf,
} from './token.ts';

export interface TokenSource {
  version(): Promise<string>;
  list(): Promise<TokenInfo[]>;
  /** The projects' settings (allowed origins); a source without them restricts no origin. */
  projects?(): Promise<ProjectAccess[]>;
}

/** Which browser origins may send with a project's public tokens (the gateway's check: origin-policy.ts). */
export interface OriginPolicy {
  /** Whether a public token of `projectId` may send from `origin` (an Origin header's value). */
  originAllowed(projectId: string, origin: string): boolean;
  /**
   * Whether some project's public token may send from `origin`: what a CORS preflight, which carries no
   * token, can be told. False only when every project with a public token lists its origins, none this one.
   */
  anyProjectAllows(origin: string): boolean;
}

/**
 * Verifies tokens against an in-memory copy of a store, reloaded whenever the store's version changes
 * (checked every `refreshMs`), so a created or revoked token takes effect on every replica without a restart.
 * A well-formed token it does not know makes it check the store at once (at most every `missRefreshMs`),
 * so a token works from the first request after it was created.
 */
export class TokenVerifier implements OriginPolicy {
  readonly #store: TokenSource;
  readonly #refreshMs: number;
  #byHash = new Map<string, TokenInfo>();
  /** Project id → the origins its public tokens may send from (only projects that restrict them). */
  #allowedOrigins = new Map<string, ReadonlySet<string>>();
  /** No project restricts origins, or some project with an active public token restricts none. */
  #someProjectOpen = true;
  #version: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #onError: (error: unknown) => void;
  readonly #missRefreshMs: number;
  readonly #kinds: ReadonlySet<TokenKind> | null;
  #lastMissRefresh = Number.NEGATIVE_INFINITY;
  #missRefresh: Promise<void> | null = null;

  constructor(
    store: TokenSource,
    options: {
      refreshMs: number;
      missRefreshMs?: number;
      onError?: (error: unknown) => void;
      /** The kinds this verifier accepts (default: every kind); others are unknown to it. */
      kinds?: readonly TokenKind[];
    },
  ) {
    this.#kinds = options.kinds ? new Set(options.kinds) : null;
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
    const [tokens, projects] = await Promise.all([this.#store.list(), this.#store.projects?.() ?? []]);
    const kinds = this.#kinds;
    this.#byHash = new Map(
      tokens.filter((t) => !t.revoked_at && (!kinds || kinds.has(t.kind))).map((t) => [t.hash, t]),
    );
    this.#allowedOrigins = new Map(
      projects
        .filter((p) => p.allowed_origins.length > 0)
        .map((p) => [p.project_id, new Set(p.allowed_origins)]),
    );
    // Preflights are refused only where the operator restricted origins: with no restriction anywhere (a
    // new install, before any public token), every origin may ask.
    this.#someProjectOpen =
      this.#allowedOrigins.size === 0 ||
      tokens.some((t) => !t.revoked_at && t.kind === 'public' && !this.#allowedOrigins.has(t.project_id));
    this.#version = version;
  }

  /** The active token's info, or null for a malformed, unknown or revoked token. */
  verify(token: string): TokenInfo | null {
    if (!this.#accepts(token)) return null;
    return this.#byHash.get(hashToken(token)) ?? null;
  }

  /**
   * As verify, but a well-formed token it does not know is checked again after reloading the store if it
   * changed (one check at a time, at most every `missRefreshMs`: unknown tokens cannot make it hammer the
   * store). A failed reload answers from what is loaded.
   */
  async verifyFresh(token: string): Promise<TokenInfo | null> {
    const known = this.verify(token);
    if (known || !this.#accepts(token)) return known;
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

  /** Well-formed and of a kind this verifier accepts: only such tokens can make it reload the store. */
  #accepts(token: string): boolean {
    if (!isWellFormedToken(token)) return false;
    const kind = tokenKindOf(token);
    return !this.#kinds || (kind !== null && this.#kinds.has(kind));
  }

  originAllowed(projectId: string, origin: string): boolean {
    const allowed = this.#allowedOrigins.get(projectId);
    return !allowed || allowed.has(origin.toLowerCase());
  }

  anyProjectAllows(origin: string): boolean {
    if (this.#someProjectOpen) return true;
    const normalized = origin.toLowerCase();
    for (const allowed of this.#allowedOrigins.values()) if (allowed.has(normalized)) return true;
    return false;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
