// Cookieless visitor ids for browsers that send no visitor_fingerprint: a keyed hash (HMAC-SHA256) of the
// project, the client IP and the User-Agent under a random salt that rotates every UTC day, as Plausible
// does. Old salts are deleted, so an id cannot be traced back to an IP, and the raw IP is never stored.
// With Redis the salt is shared so that every replica derives the same id for the same visitor.
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { link, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { makePrivateDir, readStateJson } from '@tally/state-files';
import type { Redis } from 'ioredis';

export interface SaltStore {
  /** The salt of a UTC day (YYYY-MM-DD), created on first use and the same for every caller. */
  saltFor(day: string): Promise<Buffer>;
}

export class VisitorIds {
  readonly #store: SaltStore;
  #day = '';
  /** The day's salt as a key object, and the day's bounds (ms): the per-request path reads only these. */
  #key: KeyObject | null = null;
  #dayStart = 0;
  #dayEnd = 0;
  #pending: Promise<KeyObject> | null = null;

  constructor(store: SaltStore) {
    this.#store = store;
  }

  /**
   * A 32-hex-character visitor id; stable for one visitor of one project for one UTC day. A string at
   * once when the day's salt is loaded (no promise per request), else a promise of it.
   */
  derive(projectId: string, ip: string, userAgent: string, now = Date.now()): string | Promise<string> {
    const key = now >= this.#dayStart && now < this.#dayEnd ? this.#key : null;
    if (key) return idOf(key, projectId, ip, userAgent);
    return this.#keyOf(new Date(now).toISOString().slice(0, 10)).then((loaded) =>
      idOf(loaded, projectId, ip, userAgent),
    );
  }

  #keyOf(day: string): Promise<KeyObject> {
    if (day !== this.#day || !this.#pending) {
      this.#day = day;
      this.#key = null;
      this.#pending = this.#store.saltFor(day).then(
        (salt) => {
          // A KeyObject, made once: given a Buffer, createHmac makes one on every call (~10 times the
          // cost of the HMAC itself on Node.js 24).
          const key = createSecretKey(salt);
          if (this.#day === day) {
            this.#key = key;
            this.#dayStart = Date.parse(`${day}T00:00:00.000Z`);
            this.#dayEnd = this.#dayStart + 86_400_000;
          }
          return key;
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

function idOf(key: KeyObject, projectId: string, ip: string, userAgent: string): string {
  return createHmac('sha256', key).update(`${projectId}\n${ip}\n${userAgent}`).digest('hex').slice(0, 32);
}

/**
 * Salts in TALLY_DATA_DIR, one file per day (visitor-salt-YYYY-MM-DD.json); older days' files are deleted.
 * Several event loops of one process (GATEWAY_WORKERS) and several processes may ask for a new day's salt
 * at once: each writes its candidate to a file of its own and links it to the day's name, which only the
 * first link creates (link(2) fails with EEXIST, and the file is complete before it has that name); the
 * others read the winner's. A rename would let the last writer win after the first had already derived ids
 * with its own salt.
 */
export class FileSaltStore implements SaltStore {
  readonly #dir: string;

  constructor(dataDir: string) {
    this.#dir = dataDir;
  }

  async saltFor(day: string): Promise<Buffer> {
    const path = join(this.#dir, `visitor-salt-${day}.json`);
    const existing = await readSalt(path);
    if (existing) return existing;
    // visitor-salt.json is where salts were kept before one file per day: today's stays today's salt.
    const legacy = await readSalt(join(this.#dir, LEGACY_SALT_FILE), day);
    const candidate = legacy ?? randomBytes(32);
    makePrivateDir(this.#dir);
    const tmp = join(
      this.#dir,
      `.visitor-salt-${day}.${process.pid}.${threadId}.${randomBytes(6).toString('hex')}.tmp`,
    );
    await writeFile(tmp, JSON.stringify({ day, salt: candidate.toString('hex') }), { mode: 0o600 });
    let salt = candidate;
    try {
      await link(tmp, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      salt = (await readSalt(path)) ?? candidate; // another loop or process created it first: theirs
    } finally {
      await rm(tmp, { force: true });
    }
    await this.#deleteOtherDays(day);
    return salt;
  }

  /** An old salt would let a visitor be followed back to an earlier day: only the asked day's is kept. */
  async #deleteOtherDays(day: string): Promise<void> {
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    const stale = names.filter((name) => {
      const other = SALT_FILE.exec(name)?.[1];
      return (other !== undefined && other < day) || name === LEGACY_SALT_FILE;
    });
    await Promise.all(stale.map((name) => rm(join(this.#dir, name), { force: true })));
  }
}

const LEGACY_SALT_FILE = 'visitor-salt.json';
const SALT_FILE = /^visitor-salt-(\d{4}-\d{2}-\d{2})\.json$/;

/** The salt stored in `path` (for `day`, when given); null when there is none. */
async function readSalt(path: string, day?: string): Promise<Buffer | null> {
  const stored = await readStateJson<{ day: string; salt: string }>(
    path,
    "delete it: a new salt is made, and today's visitors get new ids",
  );
  if (!stored) return null;
  return day === undefined || stored.day === day ? Buffer.from(stored.salt, 'hex') : null;
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
