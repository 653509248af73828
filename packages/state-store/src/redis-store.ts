// The state store in Redis, shared by every dashboard replica: one key per document
// (`<prefix>dashboard:<collection>:<key>`, with PX when it expires) and a set per collection listing its
// keys (members whose document expired are dropped when listed). GETDEL makes `take` atomic,
// SET NX makes `claim` atomic.
import type { Redis } from 'ioredis';
import type { StateStore } from './state-store.ts';

export class RedisStateStore implements StateStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix = 'tally:') {
    this.#redis = redis;
    this.#prefix = `${prefix}dashboard:`;
  }

  #key = (collection: string, key: string) => `${this.#prefix}${collection}:${key}`;
  #index = (collection: string) => `${this.#prefix}${collection}`;

  async get<T>(collection: string, key: string): Promise<T | null> {
    const text = await this.#redis.get(this.#key(collection, key));
    return text === null ? null : (JSON.parse(text) as T);
  }

  async put<T>(collection: string, key: string, value: T, ttlMs?: number): Promise<void> {
    const multi = this.#redis.multi();
    if (ttlMs === undefined) multi.set(this.#key(collection, key), JSON.stringify(value));
    else multi.set(this.#key(collection, key), JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)));
    multi.sadd(this.#index(collection), key);
    await multi.exec();
  }

  async delete(collection: string, key: string): Promise<boolean> {
    const [[, removed] = [null, 0]] =
      (await this.#redis.multi().del(this.#key(collection, key)).srem(this.#index(collection), key).exec()) ??
      [];
    return removed === 1;
  }

  async take<T>(collection: string, key: string): Promise<T | null> {
    const text = await this.#redis.getdel(this.#key(collection, key));
    await this.#redis.srem(this.#index(collection), key);
    return text === null ? null : (JSON.parse(text) as T);
  }

  async claim<T>(collection: string, key: string, value: T, ttlMs?: number): Promise<boolean> {
    const id = this.#key(collection, key);
    const text = JSON.stringify(value);
    const set =
      ttlMs === undefined
        ? await this.#redis.set(id, text, 'NX')
        : await this.#redis.set(id, text, 'PX', Math.max(1, Math.round(ttlMs)), 'NX');
    if (set !== 'OK') return false;
    await this.#redis.sadd(this.#index(collection), key);
    return true;
  }

  async list<T>(collection: string): Promise<T[]> {
    const keys = await this.#redis.smembers(this.#index(collection));
    if (keys.length === 0) return [];
    const texts = await this.#redis.mget(keys.map((k) => this.#key(collection, k)));
    const gone = keys.filter((_, i) => texts[i] === null);
    if (gone.length) await this.#redis.srem(this.#index(collection), ...gone);
    return texts.filter((t): t is string => t !== null).map((t) => JSON.parse(t) as T);
  }

  async close(): Promise<void> {}
}
