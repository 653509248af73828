// Cookieless visitor ids for browsers that send no visitor_fingerprint: a keyed hash (HMAC-SHA256) of the
// project, the client IP and the User-Agent under a random salt that rotates every UTC day, as Plausible
// does. Old salts are deleted, so an id cannot be traced back to an IP, and the raw IP is never stored.
// With Redis the salt is shared so that every replica derives the same id for the same visitor.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';

export interface SaltStore {
  /** The salt of a UTC day (YYYY-MM-DD), created on first use and the same for every caller. */
  saltFor(day: string): Promise<Buffer>;
}

export class VisitorIds {
  readonly #store: SaltStore;
  #day = '';
  #salt: Buffer | null = null;
  #pending: Promise<Buffer> | null = null;

  constructor(store: SaltStore) {
    this.#store = store;
  }

  /** A 32-hex-character visitor id; stable for one visitor of one project for one UTC day. */
  async derive(projectId: string, ip: string, userAgent: string, now = Date.now()): Promise<string> {
    const salt = await this.#saltOf(new Date(now).toISOString().slice(0, 10));
    return createHmac('sha256', salt).update(`${projectId}\n${ip}\n${userAgent}`).digest('hex').slice(0, 32);
  }

  #saltOf(day: string): Buffer | Promise<Buffer> {
    if (day === this.#day && this.#salt) return this.#salt;
    if (day !== this.#day || !this.#pending) {
      this.#day = day;
      this.#salt = null;
      this.#pending = this.#store.saltFor(day).then(
        (salt) => {
          if (this.#day === day) this.#salt = salt;
          return salt;
        },
        (error: unknown) => {
          if (this.#day === day) this.#pending = null;
          throw error;
        },
      );
    }
    return this.#pending;
  }
}

/** Salts in TALLY_DATA_DIR/visitor-salt.json: only the current day's salt is kept. */
export class FileSaltStore implements SaltStore {
  readonly #path: string;

  constructor(dataDir: string) {
    this.#path = join(dataDir, 'visitor-salt.json');
  }

  async saltFor(day: string): Promise<Buffer> {
    try {
      const stored = JSON.parse(await readFile(this.#path, 'utf8')) as { day: string; salt: string };
      if (stored.day === day) return Buffer.from(stored.salt, 'hex');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const salt = randomBytes(32);
    await mkdir(dirname(this.#path), { recursive: true });
    const tmp = `${this.#path}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ day, salt: salt.toString('hex') }), { mode: 0o600 });
    await rename(tmp, this.#path);
    return salt;
  }
}

/** Salts in Redis, one key per day that expires after two days; SET NX makes every replica agree. */
export class RedisSaltStore implements SaltStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix = 'tally:') {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async saltFor(day: string): Promise<Buffer> {
    const key = `${this.#prefix}visitor-salt:${day}`;
    await this.#redis.set(key, randomBytes(32).toString('hex'), 'EX', 2 * 86_400, 'NX');
    const salt = await this.#redis.get(key);
    if (!salt) throw new Error('visitor salt vanished from Redis');
    return Buffer.from(salt, 'hex');
  }
}
