// Token store in Redis, shared by every gateway replica: a hash of token hash → info, and a version
// counter that every change increments so that verifiers reload only when something changed.
import type { Redis } from 'ioredis';
import {
  assertProjectId,
  generateToken,
  matchesToken,
  newTokenInfo,
  type ProjectAccess,
  projectAccess,
  type TokenInfo,
  type TokenKind,
  type TokenStore,
} from './token.ts';

export class RedisTokenStore implements TokenStore {
  readonly #redis: Redis;
  readonly #key: string;
  /** Project id → ProjectAccess; changes bump the tokens' version, so verifiers reload both. */
  readonly #projectsKey: string;

  /** `prefix` namespaces the keys (default `tally:`), so that tests and deployments can share a server. */
  constructor(redis: Redis, prefix = 'tally:') {
    this.#redis = redis;
    this.#key = `${prefix}tokens`;
    this.#projectsKey = `${prefix}projects`;
  }

  async create(projectId: string, kind: TokenKind): Promise<{ token: string; info: TokenInfo }> {
    assertProjectId(projectId);
    const token = generateToken(kind);
    const info = newTokenInfo(token, projectId, kind);
    await this.#redis
      .multi()
      .hset(this.#key, info.hash, JSON.stringify(info))
      .incr(`${this.#key}:version`)
      .exec();
    return { token, info };
  }

  async list(): Promise<TokenInfo[]> {
    const all = await this.#redis.hgetall(this.#key);
    return Object.values(all)
      .map((v) => JSON.parse(v) as TokenInfo)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async revoke(tokenOrId: string): Promise<boolean> {
    const target = (await this.list()).find((t) => !t.revoked_at && matchesToken(t, tokenOrId));
    if (!target) return false;
    target.revoked_at = new Date().toISOString();
    await this.#redis
      .multi()
      .hset(this.#key, target.hash, JSON.stringify(target))
      .incr(`${this.#key}:version`)
      .exec();
    return true;
  }

  async setAllowedOrigins(projectId: string, origins: readonly string[]): Promise<ProjectAccess> {
    const access = projectAccess(projectId, origins);
    await this.#redis
      .multi()
      .hset(`${this.#projectsKey}`, projectId, JSON.stringify(access))
      .incr(`${this.#key}:version`)
      .exec();
    return access;
  }

  async projects(): Promise<ProjectAccess[]> {
    const all = await this.#redis.hgetall(this.#projectsKey);
    return Object.values(all).map((v) => JSON.parse(v) as ProjectAccess);
  }

  async version(): Promise<string> {
    return (await this.#redis.get(`${this.#key}:version`)) ?? '0';
  }

  async close(): Promise<void> {}
}
