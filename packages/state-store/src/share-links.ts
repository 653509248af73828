// Share links: read-only views of one project, revocable, optionally behind a password, with revenue
// hidden unless the creator includes it, embeddable only from the origins the owner lists. The link's
// token (shr_…) is stored by its hash; a password-protected link is opened with its password for a grant
// (shg_…, 24 hours), which is then the shared view's credential.
import { hashPassword, hashSecret, newSecret, verifyPassword } from './secrets.ts';
import type { StateStore } from './state-store.ts';
import { UserError } from './users.ts';

export interface ShareLink {
  id: string;
  project: string;
  name: string;
  hint: string;
  token_hash: string;
  password_hash: string | null;
  include_revenue: boolean;
  embed_origins: string[];
  created_at: string;
}

export interface ShareInput {
  name?: string | undefined;
  password?: string | undefined;
  include_revenue?: boolean | undefined;
  embed_origins?: string[] | undefined;
}

export const SHARE_PREFIX = 'shr_';
export const GRANT_PREFIX = 'shg_';
export const GRANT_TTL_MS = 24 * 3_600_000;

// A host as an origin serialises it: lower-case letters, digits, hyphens and dots, or an IPv6 address in
// brackets. WHATWG URL alone lets `;`, `,`, `*`, `'` or `$` through in a host, which would end or widen the
// CSP's frame-ancestors.
// The API's schema validates with the same pattern.
export const EMBED_ORIGIN_PATTERN =
  '^https?://(?:[a-z0-9-]+(?:\\.[a-z0-9-]+)*|\\[[0-9a-f:.]+\\])(?::[0-9]{1,5})?$';
const ORIGIN_HOST = new RegExp(EMBED_ORIGIN_PATTERN);

/**
 * Whether `origin` is exactly an origin a page may be embedded from: http or https, a host, an optional
 * port, nothing else, written as the URL standard serialises it (lower case, no default port, no slash).
 */
export function isEmbedOrigin(origin: string): boolean {
  if (!ORIGIN_HOST.test(origin)) return false;
  try {
    return new URL(origin).origin === origin;
  } catch {
    return false;
  }
}

/** What a listing shows of a link (never a hash). */
export const publicShare = (s: ShareLink) => ({
  id: s.id,
  name: s.name,
  hint: s.hint,
  include_revenue: s.include_revenue,
  password_protected: s.password_hash !== null,
  embed_origins: s.embed_origins,
  created_at: s.created_at,
});

export class ShareLinks {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** Creates a link; a UserError when an embedding origin is not exactly an origin (isEmbedOrigin). */
  async create(project: string, input: ShareInput): Promise<{ share: ShareLink; token: string }> {
    const origins = input.embed_origins ?? [];
    if (!origins.every(isEmbedOrigin)) {
      throw new UserError(
        'embed_origins must be origins such as https://blog.example: http or https, a host in lower case ' +
          'and an optional port, nothing else',
      );
    }
    const token = newSecret(SHARE_PREFIX);
    const tokenHash = hashSecret(token);
    const share: ShareLink = {
      id: tokenHash.slice(0, 12),
      project,
      name: input.name ?? '',
      hint: `${token.slice(0, 8)}…`,
      token_hash: tokenHash,
      password_hash: input.password ? await hashPassword(input.password) : null,
      include_revenue: input.include_revenue ?? false,
      embed_origins: [...new Set(origins)],
      created_at: new Date().toISOString(),
    };
    await this.#store.put('shares', tokenHash, share);
    return { share, token };
  }

  async list(project: string): Promise<ShareLink[]> {
    return (await this.#store.list<ShareLink>('shares'))
      .filter((s) => s.project === project)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** Revokes by id; false when the project has no such link. */
  async revoke(project: string, id: string): Promise<boolean> {
    const share = (await this.list(project)).find((s) => s.id === id);
    return share ? this.#store.delete('shares', share.token_hash) : false;
  }

  async findByToken(token: string): Promise<ShareLink | null> {
    if (!token.startsWith(SHARE_PREFIX) || token.length > 100) return null;
    return this.#store.get<ShareLink>('shares', hashSecret(token));
  }

  /** A grant for a password-protected link when the password is right; null otherwise. */
  async unlock(token: string, password: string): Promise<{ grant: string; expires_at: string } | null> {
    const share = await this.findByToken(token);
    if (!share?.password_hash || !(await verifyPassword(password, share.password_hash))) return null;
    const grant = newSecret(GRANT_PREFIX);
    await this.#store.put('share_grants', hashSecret(grant), { token_hash: share.token_hash }, GRANT_TTL_MS);
    return { grant, expires_at: new Date(Date.now() + GRANT_TTL_MS).toISOString() };
  }

  /** The link a grant opens, if both still exist (revoking the link ends its grants). */
  async findByGrant(grant: string): Promise<ShareLink | null> {
    if (!grant.startsWith(GRANT_PREFIX) || grant.length > 100) return null;
    const found = await this.#store.get<{ token_hash: string }>('share_grants', hashSecret(grant));
    return found ? this.#store.get<ShareLink>('shares', found.token_hash) : null;
  }
}
