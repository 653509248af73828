// The state store in LMDB (TALLY_DATA_DIR/dashboard.mdb): keys `<collection>\x1f<key>`, values the document
// with its expiry. LMDB serialises writers across processes, so `tally users add` beside a running
// dashboard is safe; expired documents are dropped when read or listed.
import { join } from 'node:path';
import {
  checkLmdbFile,
  closeAfterWriteThreads,
  makePrivateDir,
  makePrivateFiles,
  trackWriteThreads,
  type WriteThreads,
} from '@tally/state-files';
import { open, type RootDatabase } from 'lmdb';
import { isLive, type StateStore, type Stored } from './state-store.ts';

// Not NUL: lmdb's key encoding (ordered-binary) does not keep a NUL inside a string key in order.
const SEPARATOR = '\u001f';
const AFTER_SEPARATOR = '\u0020';

export class LmdbStateStore implements StateStore {
  readonly path: string;
  readonly #db: RootDatabase<Stored<unknown>, string>;
  readonly #writeThreads: WriteThreads;

  constructor(dataDir: string) {
    makePrivateDir(dataDir);
    this.path = join(dataDir, 'dashboard.mdb');
    // A truncated file would be mapped and crash the process with SIGBUS at the first read past its end.
    checkLmdbFile(
      this.path,
      "restore it from a backup, or move it away to start with no dashboard users, sessions, share links or projects' settings",
    );
    this.#db = open<Stored<unknown>, string>({ path: this.path, compression: false });
    this.#writeThreads = trackWriteThreads(this.#db);
    makePrivateFiles(this.path, `${this.path}-lock`);
  }

  async get<T>(collection: string, key: string): Promise<T | null> {
    this.#fresh();
    const stored = this.#db.get(`${collection}${SEPARATOR}${key}`) as Stored<T> | undefined;
    return isLive(stored) ? (stored as Stored<T>).value : null;
  }

  async put<T>(collection: string, key: string, value: T, ttlMs?: number): Promise<void> {
    await this.#db.put(`${collection}${SEPARATOR}${key}`, {
      value,
      expires_at: ttlMs === undefined ? null : Date.now() + ttlMs,
    });
  }

  async delete(collection: string, key: string): Promise<boolean> {
    // lmdb-js's remove() answers true whether or not the key was there: look inside the write transaction.
    const id = `${collection}${SEPARATOR}${key}`;
    return this.#db.transactionSync(() => {
      const stored = this.#db.get(id) as Stored<unknown> | undefined;
      if (!stored) return false;
      this.#db.removeSync(id);
      return isLive(stored);
    });
  }

  async take<T>(collection: string, key: string): Promise<T | null> {
    const id = `${collection}${SEPARATOR}${key}`;
    // A synchronous write transaction: the read and the delete happen under LMDB's writer lock.
    return this.#db.transactionSync(() => {
      const stored = this.#db.get(id) as Stored<T> | undefined;
      if (!stored) return null;
      this.#db.removeSync(id);
      return isLive(stored) ? stored.value : null;
    });
  }

  async claim<T>(collection: string, key: string, value: T, ttlMs?: number): Promise<boolean> {
    const id = `${collection}${SEPARATOR}${key}`;
    // The read and the write in one synchronous write transaction: LMDB's writer lock spans processes, so
    // a dashboard in another process claiming the same key waits and then sees this one's document.
    return this.#db.transactionSync(() => {
      if (isLive(this.#db.get(id) as Stored<unknown> | undefined)) return false;
      this.#db.putSync(id, { value, expires_at: ttlMs === undefined ? null : Date.now() + ttlMs });
      return true;
    });
  }

  async list<T>(collection: string): Promise<T[]> {
    const prefix = `${collection}${SEPARATOR}`;
    this.#fresh();
    const out: T[] = [];
    for (const { value } of this.#db.getRange({ start: prefix, end: `${collection}${AFTER_SEPARATOR}` })) {
      if (isLive(value)) out.push((value as Stored<T>).value);
    }
    return out;
  }

  /**
   * Reads see what was committed until now, also by another process (the CLI adding a user beside a
   * running dashboard): lmdb-js otherwise keeps reading from the snapshot its read transaction started on.
   */
  #fresh(): void {
    this.#db.resetReadTxn();
  }

  /**
   * Once the writes under way have committed and lmdb-js's write threads are done with the environment:
   * closing it while one still runs can crash the process (lmdb-write-threads.ts in @tally/state-files).
   */
  close(): Promise<void> {
    return closeAfterWriteThreads(this.#db, this.#writeThreads);
  }
}
