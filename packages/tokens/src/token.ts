// An API token: its format (`pub_`/`sec_`/`read_` followed by 32 random base62 characters), its hash (only a
// SHA-256 hash of a token is stored: tokens are long random strings, so a fast hash is enough), what is
// stored of it, and the store interface its backends implement (file-store.ts, redis-store.ts).
import { hash, randomBytes } from 'node:crypto';

/**
 * `public` and `secret` tokens send records to POST /api/ingest (secret ones also revenue); `read` keys
 * read one project's figures through the dashboard's API and are refused by the gateway.
 */
export type TokenKind = 'public' | 'secret' | 'read';
export const TOKEN_KINDS: readonly TokenKind[] = ['public', 'secret', 'read'];
export const TOKEN_PREFIX: Record<TokenKind, string> = { public: 'pub_', secret: 'sec_', read: 'read_' };

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

/**
 * What is set per project for its ingest tokens: the origins its public tokens may send from (an empty list:
 * any). Kept beside the tokens, in the same store, so that it reaches every gateway the way tokens do.
 */
export interface ProjectAccess {
  project_id: string;
  allowed_origins: string[];
  updated_at: string;
}

export interface TokenStore {
  /** Stores a new token for `projectId` and returns it: the only time the token itself is seen. */
  create(projectId: string, kind: TokenKind): Promise<{ token: string; info: TokenInfo }>;
  list(): Promise<TokenInfo[]>;
  /** Revokes by token or by id; false when no such token exists. */
  revoke(tokenOrId: string): Promise<boolean>;
  /** Sets the origins a project's public tokens may send from; an empty list lifts the restriction. */
  setAllowedOrigins(projectId: string, origins: readonly string[]): Promise<ProjectAccess>;
  /** Every project with settings. */
  projects(): Promise<ProjectAccess[]>;
  /** A value that changes whenever the tokens or the projects' settings change; cheap to read. */
  version(): Promise<string>;
  close(): Promise<void>;
}

const TOKEN_PATTERN = /^(pub|sec|read)_[0-9A-Za-z]{32,96}$/;
const PROJECT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const isWellFormedToken = (token: string): boolean => TOKEN_PATTERN.test(token);
// crypto.hash is the one-shot form (no Hash object per call): every request hashes its token.
export const hashToken = (token: string): string => hash('sha256', token, 'hex');
export const tokenKindOf = (token: string): TokenKind | null =>
  TOKEN_KINDS.find((kind) => token.startsWith(TOKEN_PREFIX[kind])) ?? null;

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
    hint: `${token.slice(0, TOKEN_PREFIX[kind].length + 4)}…`,
    created_at: new Date().toISOString(),
    revoked_at: null,
  };
}

/** Finds the token a `revoke` argument names: a full token (by its hash) or an id. */
export function matchesToken(info: TokenInfo, tokenOrId: string): boolean {
  return tokenKindOf(tokenOrId) ? info.hash === hashToken(tokenOrId) : info.id === tokenOrId;
}

/**
 * An origin as browsers send it in the Origin header (`https://shop.example`, `http://localhost:3000`):
 * scheme, host and port only, lower case, default port left out. Throws on anything else (a path, `*`).
 */
export function normalizeOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new Error(`"${value}" is not an origin (scheme://host[:port], e.g. https://shop.example)`);
  }
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  if (!/^https?:$/.test(url.protocol) || !bare) {
    throw new Error(`"${value}" is not an origin (scheme://host[:port], e.g. https://shop.example)`);
  }
  return url.origin;
}

/** The project's settings with a new list of allowed origins, normalized and without duplicates. */
export function projectAccess(projectId: string, origins: readonly string[]): ProjectAccess {
  assertProjectId(projectId);
  return {
    project_id: projectId,
    allowed_origins: [...new Set(origins.map(normalizeOrigin))],
    updated_at: new Date().toISOString(),
  };
}
