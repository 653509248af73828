// The embedded record log: one LMDB environment under TALLY_DATA_DIR/log, one database per topic keyed by
// offset, and a database of consumer-group positions. lmdb-js batches every write of an event turn into
// one transaction and flushes many transactions with one sync, so concurrent requests share an fsync
// (group commit) and append resolves only once the records are on disk. Retention deletes what every
// consumer group of a topic has committed past, once it is old enough (prune). Records a consumer sets
// aside are kept in a database of their own (the dead-letter store); only the writer appends, so a replay
// asked for by another process (the CLI beside a running gateway) is a request the writer carries out.
// Each record is stored with a checksum (record-encoding.ts), checked when it is read: a record whose bytes
// were damaged on disk reaches the consumer as an UndecodableMessage with those bytes, which it sets aside
// as a dead letter, never as data.
// A full disk fails commits (lmdb-js reports EIO or ENOSPC): the appends of that commit are refused
// (LogUnavailableError, so the gateway answers 503), the log reports itself out of space (health) and
// refuses appends at once while its file system stays below LOW_SPACE_BYTES free, and appends again as
// soon as there is room, without a restart. Offsets taken by a commit that failed are not used again (a
// gap, which readers step over).
// Design notes: docs/design/record-log.md.
import { EventEmitter } from 'node:events';
import { statfsSync } from 'node:fs';
import { join } from 'node:path';
import type { IngestRecord, RecordType } from '@tally/contract';
import {
  checkLmdbFile,
  closeAfterWriteThreads,
  makePrivateDir,
  makePrivateFiles,
  trackWriteThreads,
  type WriteThreads,
} from '@tally/state-files';
import { type Database, open, type RootDatabase } from 'lmdb';
import {
  ALL_TOPICS,
  type BacklogOptions,
  byFailedAt,
  type DeadLetter,
  type DeadLetterStore,
  type GroupBacklog,
  type LogConsumer,
  type LogHealth,
  type LogPosition,
  LogUnavailableError,
  type PolledMessage,
  type RecordLog,
  type ReplayResult,
  topicOf,
} from '../record-log.ts';
import { decodeRecord, type EncodedRecord, encodeRecord } from './record-encoding.ts';
import { acquireWriterLock, EmbeddedLogLockedError } from './writer-lock.ts';

export interface EmbeddedLogOptions {
  /** Directory of the LMDB environment (created if missing). */
  path: string;
  /** How often a consumer re-reads the log when it waits for records appended by another process. */
  pollIntervalMs?: number;
  /**
   * How long a record is kept after it was received; it is deleted only once it is also committed by every
   * consumer group that reads its topic. Undefined: records are kept for ever.
   */
  retentionMs?: number;
  /**
   * Take the writer lock now (a second writer fails at start-up); otherwise it is taken at the first
   * append. Only appends need it: consumers and readers may open the log alongside its writer.
   */
  writer?: boolean;
  /** How often retention runs (default 60 s). */
  pruneIntervalMs?: number;
  /** How often the writer carries out replays of dead letters that another process asked for (default 1 s). */
  replayIntervalMs?: number;
  /** Called when a retention pass fails (the next pass tries again). */
  onWarning?: (message: string, error: unknown) => void;
  /**
   * For a writer: after this many bytes appended, it closes and reopens its LMDB environment, between two
   * commits, appends, reads and other writes arriving meanwhile waiting for it. Unmapping the file
   * releases the pages the kernel mapped around each commit (fault-around) and those its consumers read,
   * which otherwise stay resident (`RssFile`) as the log grows (docs/design/record-log.md, "Resident file
   * pages"). Undefined: never.
   */
  releasePagesEveryBytes?: number;
  /**
   * The other handle on this environment in the process, if any (npm start with one gateway loop: the
   * consumers' log in the main thread, while the loop's thread is the writer). lmdb-js maps a file once
   * per process and unmaps it only when its last handle there closes, so a reopen asks this one to close
   * first and to open again after (thread/release-port.ts carries the asking between threads).
   */
  sharer?: EnvironmentSharer;
}

/** Another handle on the same LMDB environment in this process, closed while the writer reopens its own. */
export interface EnvironmentSharer {
  /** Resolves once the other handle is closed (or has not answered in time: the pages then stay mapped). */
  suspend(): Promise<void>;
  /** The writer's handle is open again: the other may open its own. */
  resume(): void;
}

/** A consumer group's committed position in one topic, and how far behind the topic's end it is. */
export interface GroupPosition {
  group: string;
  topic: RecordType;
  /** Offset of the next record the group will read. */
  position: number;
  /** Records appended at or after the position. */
  lag: number;
}

/**
 * A consumer of the embedded log. A message is a record, or, when its stored bytes fail their checksum
 * (damaged on disk) or do not decode, an UndecodableMessage with those bytes.
 */
export interface EmbeddedLogConsumer extends LogConsumer {
  poll(options?: { max?: number; waitMs?: number }): Promise<PolledMessage[]>;
}

/** The embedded log, with retention and consumer-group administration exposed for tests and tools. */
export interface EmbeddedRecordLog extends RecordLog {
  /**
   * Appends records encoded elsewhere (record-encoding.ts: a gateway thread's), written as they are;
   * resolves, as append does, only once every one of them is durable.
   */
  appendEncoded(records: readonly EncodedRecord[]): Promise<void>;
  consumer(options: { group: string; topics?: readonly RecordType[] }): EmbeddedLogConsumer;
  /** Deletes the records retention allows to delete, as of `now`; resolves to how many it deleted. */
  prune(now?: number): Promise<number>;
  /** Every committed position of every group (retention waits for the lowest one of each topic). */
  groups(): GroupPosition[];
  /**
   * Removes a group's positions, so that retention no longer waits for it. Only for a group that no
   * consumer uses any more: a running consumer of it would write them again, and could meanwhile lose
   * records it had read but not committed. Resolves to how many positions were removed.
   */
  forgetGroup(group: string): Promise<number>;
  /**
   * Moves a group's committed positions back to the first record each of its topics still holds, so that
   * its consumers are delivered everything again (`tally warehouse reland`). Only while no consumer of the
   * group runs: a running one keeps its own position and would commit over this. Resolves to the topics
   * rewound and the offset each now starts at (above 0 when retention deleted the records before it).
   */
  rewindGroup(group: string): Promise<Array<{ topic: RecordType; from: number }>>;
  /** How many times this handle closed and reopened its environment (releasePagesEveryBytes, or suspended). */
  environmentReopens(): number;
  /**
   * Closes this handle's environment until resumeEnvironment, for a writer of the same file in another
   * thread that reopens its own (EnvironmentSharer); reads, commits and appends meanwhile wait. Resolves
   * once it is closed.
   */
  suspendEnvironment(): Promise<void>;
  /** Opens the environment again after suspendEnvironment (the waiting work goes on). */
  resumeEnvironment(): void;
}

/** What to do about a damaged records.mdb (DamagedStateFileError's advice). */
const DAMAGED_LOG =
  'restore it from a backup, or move it away to start with an empty record log: the records it holds that ' +
  'were not landed yet, and its dead letters, are then lost, and the consumers start again at offset 0';

const NO_SPACE = "no space left on the record log's disk";

/** Records deleted per write transaction of a retention pass. */
const PRUNE_CHUNK = 2000;

/**
 * Free space on the log's file system below which a failed commit is taken for a full disk, and after one
 * appends are refused at once (and health says so) until there is more again: enough for a burst of
 * records at the largest body size and for LMDB's copy-on-write pages, without tying the gateway to an
 * exact figure the file system does not promise.
 */
export const LOW_SPACE_BYTES = 16 * 1024 * 1024;
/** How long a measure of the free space is trusted, while the log is out of space. */
const SPACE_CHECK_MS = 250;

/** Error codes of a write refused for lack of space (errno names or numbers, and LMDB's map full). */
const NO_SPACE_CODES = new Set<unknown>(['ENOSPC', 'EDQUOT', 28, 122, -30792]);

/**
 * The cause of a failed lmdb-js write: a failed commit is reported as "Commit failed" with the cause in a
 * second promise, `commitError`, which is handled here (unhandled, it would end the process).
 */
async function causeOf(error: unknown): Promise<unknown> {
  const commitError = (error as { commitError?: Promise<unknown> } | null)?.commitError;
  if (typeof commitError?.then !== 'function') return error;
  return commitError.then(
    () => error,
    (cause: unknown) => cause,
  );
}

export function openEmbeddedLog(options: EmbeddedLogOptions): EmbeddedRecordLog {
  return new EmbeddedLog(options);
}

class EmbeddedLog implements EmbeddedRecordLog {
  #root!: RootDatabase;
  /**
   * #root's write threads: its environment closes only once they are done with it (closeAfterWriteThreads):
   * closing the process's last handle while one still runs crashes the process.
   */
  #writeThreads!: WriteThreads;
  /** Values are the records' stored bytes (record-encoding.ts: framed, with a checksum). */
  readonly #topics = new Map<RecordType, Database<Uint8Array, number>>();
  #positions!: Database<number, string>;
  #deadLetters!: Database<DeadLetter, string>;
  /** Replays asked of the writer: dead-letter id → when asked. */
  #replayRequests!: Database<number, string>;
  readonly #file: string;
  /** Bytes appended since the environment was (re)opened, and after how many it is reopened. */
  #appendedBytes = 0;
  readonly #releasePagesEveryBytes: number | undefined;
  /** Set while the environment is closed and reopened: appends and reads wait for it, timers skip their turn. */
  #reopening: Promise<void> | null = null;
  /** Whether #root is open (false while a reopen has it closed, and once the log is closed). */
  #environmentOpen = false;
  readonly #sharer: EnvironmentSharer | undefined;
  /** Ends a suspension (suspendEnvironment): the environment opens again. */
  #resume: (() => void) | null = null;
  /** Appends queued and not yet settled; a reopen waits until there are none. */
  #inFlight = 0;
  #settled: (() => void) | null = null;
  #reopens = 0;
  /** Appends that arrived during a reopen, in their order, and how many released ones have not resumed yet. */
  #waiting: Array<() => void> = [];
  #releasing = 0;
  readonly deadLetters: DeadLetterStore;
  /** Next offset to assign per topic; set when this log becomes the writer (one per directory). */
  readonly #nextOffset = new Map<RecordType, number>();
  readonly #appended = new EventEmitter();
  readonly #pollIntervalMs: number;
  readonly #path: string;
  #releaseWriterLock: (() => void) | null = null;
  readonly #retentionMs: number | undefined;
  readonly #pruneTimer: NodeJS.Timeout | undefined;
  #replayTimer: NodeJS.Timeout | undefined;
  readonly #replayIntervalMs: number;
  readonly #onWarning: (message: string, error: unknown) => void;
  #pruning: Promise<number> | null = null;
  #lastError: unknown = null;
  /** The last write failed for lack of space, and none has succeeded since. */
  #outOfSpace = false;
  #spaceCheckedAt = 0;
  #lowOnSpace = false;
  #closed = false;

  constructor(options: EmbeddedLogOptions) {
    makePrivateDir(options.path);
    this.#path = options.path;
    this.#pollIntervalMs = options.pollIntervalMs ?? 50;
    const file = join(options.path, 'records.mdb');
    this.#file = file;
    // A truncated file would be mapped and crash the process with SIGBUS at the first read past its end.
    checkLmdbFile(file, DAMAGED_LOG);
    this.#openEnvironment();
    makePrivateFiles(file, `${file}-lock`);
    this.#releasePagesEveryBytes = options.releasePagesEveryBytes;
    this.#sharer = options.sharer;
    this.deadLetters = new EmbeddedDeadLetters(this);
    this.#appended.setMaxListeners(0);
    this.#onWarning = options.onWarning ?? (() => {});
    this.#replayIntervalMs = options.replayIntervalMs ?? 1000;
    if (options.writer) this.#becomeWriter();
    this.#retentionMs = options.retentionMs;
    if (this.#retentionMs !== undefined) {
      this.#pruneTimer = setInterval(() => {
        this.prune().catch((error) => this.#onWarning('record log retention pass failed', error));
      }, options.pruneIntervalMs ?? 60_000);
      this.#pruneTimer.unref();
    }
  }

  /** Opens the LMDB environment and its databases (at construction, and again after a reopen). */
  #openEnvironment(): void {
    this.#root = open({ path: this.#file, maxDbs: 16, compression: false });
    this.#writeThreads = trackWriteThreads(this.#root);
    for (const topic of ALL_TOPICS) {
      const db = this.#root.openDB<Uint8Array, number>({ name: `topic:${topic}`, encoding: 'binary' });
      this.#topics.set(topic, db);
    }
    this.#positions = this.#root.openDB<number, string>({ name: 'consumer-positions' });
    this.#deadLetters = this.#root.openDB<DeadLetter, string>({ name: 'dead-letters' });
    this.#replayRequests = this.#root.openDB<number, string>({ name: 'replay-requests' });
    this.#environmentOpen = true;
  }

  /**
   * Starts a reopen (#reopen): appends, reads and other writes that arrive meanwhile wait for it, and go
   * on in the order they came once it is over.
   */
  #startReopen(whileClosed?: () => Promise<void>): Promise<void> {
    this.#appendedBytes = 0;
    const reopening = this.#reopen(whileClosed).finally(() => {
      this.#reopening = null;
      this.#settled = null;
      this.#releaseWaiting();
    });
    this.#reopening = reopening;
    reopening.catch(() => {}); // reported by #reopen; the work that waits for it finds out
    return reopening;
  }

  /**
   * Closes and reopens the environment once every append, read and write begun before has settled
   * (releasePagesEveryBytes, or a suspension: whileClosed runs between). The process's other handle on
   * the file (sharer) closes first and opens again after: the file is unmapped only when both are closed.
   * Offsets continue from #nextOffset: nothing else appends (the writer lock), so nothing changed meanwhile.
   */
  async #reopen(whileClosed?: () => Promise<void>): Promise<void> {
    await this.#pruning?.catch(() => {});
    await this.#quiet();
    const sharer = this.#sharer;
    try {
      await sharer?.suspend();
      await closeAfterWriteThreads(this.#root, this.#writeThreads);
      this.#environmentOpen = false;
      await whileClosed?.();
      if (this.#closed) return; // closed while suspended: it stays closed
      this.#openEnvironment();
      this.#reopens += 1;
    } catch (error) {
      this.#lastError = error;
      this.#onWarning('record log: reopening the environment failed', error);
      throw error;
    } finally {
      sharer?.resume();
    }
  }

  /** Resolves once no append, read or write begun before is in flight. */
  #quiet(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#settled = resolve;
    });
  }

  environmentReopens(): number {
    return this.#reopens;
  }

  async suspendEnvironment(): Promise<void> {
    while (this.#reopening) await this.#reopening.catch(() => {});
    if (this.#closed) return;
    await new Promise<void>((closed, failed) => {
      const resumed = new Promise<void>((resume) => {
        this.#resume = resume;
      });
      this.#startReopen(async () => {
        closed();
        await resumed;
      }).catch(failed);
    });
  }

  resumeEnvironment(): void {
    const resume = this.#resume;
    this.#resume = null;
    resume?.();
  }

  /**
   * Runs work that reads or writes the environment once no reopen is under way; a reopen that starts
   * meanwhile waits for it (the consumers' polls and commits, backlog, dead letters).
   */
  whileOpen<T>(work: () => T | Promise<T>): Promise<T> {
    return this.#tracked(async () => work());
  }

  /** A place in the queue of appends: resolved once the reopen is over and those queued before went on. */
  #waitTurn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
    });
  }

  /** A queued append has assigned its offsets: once all released ones have, the next queued ones go on. */
  #turnTaken(): void {
    this.#releasing -= 1;
    if (this.#releasing === 0 && !this.#reopening && this.#waiting.length > 0) this.#releaseWaiting();
  }

  /** Lets the queued appends go on, in their order (their continuations run one after the other). */
  #releaseWaiting(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    this.#releasing = waiting.length;
    for (const resolve of waiting) resolve();
  }

  /**
   * Runs writes other than appends once no reopen is under way, counted with the appends in flight so that
   * a reopen starting meanwhile waits for them (the count is taken in the same turn as the check).
   */
  async #tracked<T>(work: () => Promise<T>): Promise<T> {
    while (this.#reopening) await this.#reopening.catch(() => {});
    this.#inFlight += 1;
    try {
      return await work();
    } finally {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#settled?.();
    }
  }

  append(records: readonly IngestRecord[]): Promise<void> {
    return this.#write(records, (record) => [topicOf(record), encodeRecord(record)]);
  }

  appendEncoded(records: readonly EncodedRecord[]): Promise<void> {
    return this.#write(records, (record) => [record.type, record.bytes]);
  }

  async #write<T>(items: readonly T[], entry: (item: T) => [RecordType, Uint8Array]): Promise<void> {
    if (this.#closed) throw new LogUnavailableError('record log is closed');
    // Out of space: refused at once rather than one failed commit (and lmdb-js's line on stderr) per turn.
    if (this.#outOfSpace && this.#isLowOnSpace()) throw new LogUnavailableError(NO_SPACE);
    // Appends that arrive during a reopen (or while those before them still wait) queue, and resume in the
    // order they came, each assigning its offsets in one synchronous block: offsets keep the appends' order.
    const queued = this.#reopening !== null || this.#releasing > 0 || this.#waiting.length > 0;
    if (queued) await this.#waitTurn();
    let bytes = 0;
    let writes: Promise<boolean>[];
    try {
      if (this.#closed) throw new LogUnavailableError('record log is closed');
      if (!this.#releaseWriterLock) this.#becomeWriter();
      // Offsets are assigned and writes queued in the same synchronous block, so they commit in offset order.
      writes = items.map((item) => {
        const [topic, value] = entry(item);
        const offset = this.#nextOffset.get(topic) ?? 0;
        this.#nextOffset.set(topic, offset + 1);
        bytes += value.byteLength;
        return this.#topic(topic).put(offset, value);
      });
    } finally {
      if (queued) this.#turnTaken();
    }
    this.#inFlight += 1;
    try {
      await Promise.all(writes);
      await this.#root.flushed;
      this.#lastError = null;
      this.#outOfSpace = false;
    } catch (error) {
      throw await this.#failed(error, 'record log append failed');
    } finally {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#settled?.();
    }
    this.#appended.emit('append');
    this.#appendedBytes += bytes;
    const every = this.#releasePagesEveryBytes;
    if (every !== undefined && this.#appendedBytes >= every && !this.#reopening && !this.#closed) {
      this.#startReopen();
    }
  }

  /** Notes a failed write (for lack of space?) and answers the error to throw: a LogUnavailableError. */
  async #failed(error: unknown, message: string): Promise<LogUnavailableError> {
    const cause = await causeOf(error);
    this.#lastError = cause;
    const code = (cause as { code?: unknown } | null)?.code;
    this.#outOfSpace = NO_SPACE_CODES.has(code) || this.#isLowOnSpace(true);
    return new LogUnavailableError(this.#outOfSpace ? NO_SPACE : message, { cause });
  }

  /** Whether the log's file system has less than LOW_SPACE_BYTES free (measured at most every 250 ms). */
  #isLowOnSpace(fresh = false): boolean {
    const now = Date.now();
    if (fresh || now - this.#spaceCheckedAt >= SPACE_CHECK_MS) {
      this.#spaceCheckedAt = now;
      try {
        const { bavail, bsize } = statfsSync(this.#path);
        this.#lowOnSpace = bavail * bsize < LOW_SPACE_BYTES;
      } catch {
        this.#lowOnSpace = false; // cannot tell: let the next write find out
      }
    }
    return this.#lowOnSpace;
  }

  /** Takes the writer lock, then continues each topic's offsets from what is on disk now. */
  #becomeWriter(): void {
    this.#releaseWriterLock = acquireWriterLock(this.#path);
    this.#root.resetReadTxn();
    for (const [topic, db] of this.#topics) {
      const [last] = db.getKeys({ reverse: true, limit: 1 });
      this.#nextOffset.set(topic, typeof last === 'number' ? last + 1 : 0);
    }
    // The writer carries out the replays other processes ask for.
    this.#replayTimer = setInterval(() => {
      this.replayRequested().catch((error) => this.#onWarning('dead-letter replay failed', error));
    }, this.#replayIntervalMs);
    this.#replayTimer.unref();
  }

  /** Whether this log appends (it holds the writer lock), taking the lock if it is free. */
  tryBecomeWriter(): boolean {
    if (this.#releaseWriterLock) return true;
    try {
      this.#becomeWriter();
      return true;
    } catch (error) {
      if (error instanceof EmbeddedLogLockedError) return false;
      throw error;
    }
  }

  // --- used by EmbeddedDeadLetters ---

  async putDeadLetters(letters: readonly DeadLetter[]): Promise<void> {
    if (this.#closed) throw new LogUnavailableError('record log is closed');
    try {
      await this.#tracked(async () => {
        await Promise.all(letters.map((letter) => this.#deadLetters.put(letter.id, letter)));
        await this.#root.flushed;
      });
    } catch (error) {
      throw await this.#failed(error, 'dead letters could not be stored');
    }
  }

  readDeadLetters(): DeadLetter[] {
    this.#root.resetReadTxn();
    return [...this.#deadLetters.getRange()].map(({ value }) => value);
  }

  readDeadLetter(id: string): DeadLetter | null {
    this.#root.resetReadTxn();
    return this.#deadLetters.get(id) ?? null;
  }

  async removeDeadLetters(ids: readonly string[]): Promise<number> {
    return this.#tracked(async () => {
      this.#root.resetReadTxn();
      const present = ids.filter((id) => this.#deadLetters.doesExist(id));
      await Promise.all(
        present.flatMap((id) => [this.#deadLetters.remove(id), this.#replayRequests.remove(id)]),
      );
      await this.#root.flushed;
      return present.length;
    });
  }

  async requestReplays(ids: readonly string[]): Promise<void> {
    const now = Date.now();
    await this.#tracked(async () => {
      await Promise.all(ids.map((id) => this.#replayRequests.put(id, now)));
      await this.#root.flushed;
    });
  }

  /** The writer's part: appends the records of requested replays and removes their letters. */
  async replayRequested(): Promise<number> {
    if (this.#closed || !this.#releaseWriterLock || this.#reopening) return 0;
    this.#root.resetReadTxn();
    const ids = [...this.#replayRequests.getKeys()];
    if (ids.length === 0) return 0;
    const letters = ids.map((id) => this.#deadLetters.get(id)).filter((l) => l?.record) as DeadLetter[];
    if (letters.length > 0) await this.append(letters.map((letter) => letter.record as IngestRecord));
    await this.removeDeadLetters(ids);
    return letters.length;
  }

  consumer(options: { group: string; topics?: readonly RecordType[] }): EmbeddedLogConsumer {
    return new EmbeddedConsumer(this, options.group, options.topics ?? ALL_TOPICS);
  }

  async health(): Promise<LogHealth> {
    if (this.#closed) return { ok: false, detail: 'closed' };
    // Out of space: not ready while the disk is still (nearly) full; ready again once there is room, so
    // that a load balancer sends the appends that will find out.
    if (this.#outOfSpace) return this.#isLowOnSpace() ? { ok: false, detail: NO_SPACE } : { ok: true };
    if (this.#lastError) return { ok: false, detail: 'last append failed' };
    return { ok: true };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#pruneTimer);
    clearInterval(this.#replayTimer);
    this.resumeEnvironment(); // a suspended handle stays closed
    await this.#reopening?.catch(() => {});
    await this.#pruning?.catch(() => {});
    this.#appended.emit('append');
    if (this.#environmentOpen) {
      this.#environmentOpen = false;
      // Appends and reads under way finish first, so that no write thread starts once the threads are idle.
      await this.#quiet();
      await closeAfterWriteThreads(this.#root, this.#writeThreads);
    }
    this.#releaseWriterLock?.();
  }

  groups(): GroupPosition[] {
    this.#root.resetReadTxn();
    const positions: GroupPosition[] = [];
    for (const { key, value } of this.#positions.getRange()) {
      const cut = key.indexOf('\u0000');
      const topic = key.slice(cut + 1) as RecordType;
      if (!this.#topics.has(topic)) continue;
      const [last] = this.#topic(topic).getKeys({ reverse: true, limit: 1 });
      const end = typeof last === 'number' ? last + 1 : 0;
      positions.push({ group: key.slice(0, cut), topic, position: value, lag: Math.max(0, end - value) });
    }
    return positions;
  }

  async backlog(options: BacklogOptions = {}): Promise<GroupBacklog[]> {
    const withOldest = options.oldest ?? true;
    return this.whileOpen(() => this.#backlog(withOldest));
  }

  #backlog(withOldest: boolean): GroupBacklog[] {
    return this.groups().map(({ group, topic, position, lag }) => {
      // The position may be below the first record kept (a group that had read nothing when retention ran).
      const [oldest] =
        lag > 0 && withOldest ? this.#topic(topic).getRange({ start: position, limit: 1 }) : [];
      return { group, topic, lag, oldest_at: oldest ? receivedAt(oldest.value, topic) : null };
    });
  }

  async forgetGroup(group: string): Promise<number> {
    const keys = this.groups()
      .filter((p) => p.group === group)
      .map((p) => `${p.group}\u0000${p.topic}`);
    await Promise.all(keys.map((key) => this.#positions.remove(key)));
    return keys.length;
  }

  async rewindGroup(group: string): Promise<Array<{ topic: RecordType; from: number }>> {
    const rewound = this.groups()
      .filter((p) => p.group === group)
      .map(({ topic }) => {
        const [first] = this.#topic(topic).getKeys({ limit: 1 });
        return { topic, from: typeof first === 'number' ? first : 0 };
      });
    for (const { topic, from } of rewound) await this.#positions.put(`${group}\u0000${topic}`, from);
    await this.#root.flushed;
    return rewound;
  }

  prune(now = Date.now()): Promise<number> {
    // While the environment is reopened the pass waits for the next turn.
    if (this.#retentionMs === undefined || this.#closed || this.#reopening) return Promise.resolve(0);
    // One pass at a time; a call during a pass gets that pass's result.
    this.#pruning ??= this.#prune(now - this.#retentionMs).finally(() => {
      this.#pruning = null;
    });
    return this.#pruning;
  }

  /**
   * Deletes, per topic, the records below the lowest position committed by the groups that read it and
   * received at or before `cutoff`. A topic no group has committed on keeps everything (its consumer may
   * not have started yet), and the newest record of a topic is always kept: a restarted log continues its
   * offsets from it, so that committed positions never point past a reused offset.
   */
  async #prune(cutoff: number): Promise<number> {
    // groups() starts a fresh read: it sees the commits of consumers in other processes.
    const lowest = new Map<string, number>();
    for (const { topic, position } of this.groups()) {
      lowest.set(topic, Math.min(lowest.get(topic) ?? Number.POSITIVE_INFINITY, position));
    }
    let deleted = 0;
    for (const topic of ALL_TOPICS) {
      const committed = lowest.get(topic);
      if (committed === undefined) continue;
      const db = this.#topic(topic);
      const [newest] = db.getKeys({ reverse: true, limit: 1 });
      if (typeof newest !== 'number') continue;
      const end = Math.min(committed, newest); // exclusive
      for (;;) {
        if (this.#closed) return deleted;
        const doomed: number[] = [];
        for (const { key, value } of db.getRange({ end, limit: PRUNE_CHUNK })) {
          // Appended in order: the rest is newer. A damaged record (no time to read) is below every
          // group's position, so it was set aside as a dead letter with its bytes: it goes with its neighbours.
          const received = receivedAt(value, topic);
          if (received !== null && received > cutoff) break;
          doomed.push(key);
        }
        if (doomed.length === 0) break;
        await Promise.all(doomed.map((key) => db.remove(key)));
        this.#root.resetReadTxn();
        deleted += doomed.length;
        if (doomed.length < PRUNE_CHUNK) break;
      }
    }
    return deleted;
  }

  // --- used by EmbeddedConsumer ---

  #topic(topic: RecordType): Database<Uint8Array, number> {
    const db = this.#topics.get(topic);
    if (!db) throw new Error(`unknown topic ${topic}`);
    return db;
  }

  get closed(): boolean {
    return this.#closed;
  }

  read(topic: RecordType, fromOffset: number, limit: number): PolledMessage[] {
    const messages: PolledMessage[] = [];
    for (const { key, value } of this.#topic(topic).getRange({ start: fromOffset, limit })) {
      try {
        messages.push({ topic, partition: 0, offset: key, record: decodeRecord(value, topic) });
      } catch (error) {
        // Copied: the value may be a view of LMDB's memory map, valid only during this read.
        const raw = Uint8Array.prototype.slice.call(value);
        messages.push({
          topic,
          partition: 0,
          offset: key,
          record: null,
          raw,
          error: (error as Error).message,
        });
      }
    }
    return messages;
  }

  committedPosition(group: string, topic: RecordType): number {
    return this.#positions.get(`${group}\u0000${topic}`) ?? 0;
  }

  async commitPosition(group: string, topic: RecordType, next: number): Promise<void> {
    try {
      await this.#positions.put(`${group}\u0000${topic}`, next);
      await this.#root.flushed;
    } catch (error) {
      // Retryable: the consumer commits again once there is room.
      throw await this.#failed(error, 'consumer position could not be committed');
    }
  }

  /** Resolves on the next append in this process, or after the poll interval (appends from elsewhere). */
  waitForAppend(maxMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#appended.off('append', done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(maxMs, this.#pollIntervalMs));
      this.#appended.once('append', done);
    });
  }

  refresh(): void {
    this.#root.resetReadTxn();
  }
}

/**
 * The dead-letter store of the embedded log: a database beside the topics. Replay appends, which only
 * the writer may do: a log that is not the writer and cannot become it (a gateway runs) asks the writer,
 * which carries the request out within a second.
 */
class EmbeddedDeadLetters implements DeadLetterStore {
  readonly #log: EmbeddedLog;
  constructor(log: EmbeddedLog) {
    this.#log = log;
  }

  add(letters: readonly DeadLetter[]): Promise<void> {
    return this.#log.putDeadLetters(letters);
  }

  async list(): Promise<DeadLetter[]> {
    return (await this.#log.whileOpen(() => this.#log.readDeadLetters())).sort(byFailedAt);
  }

  get(id: string): Promise<DeadLetter | null> {
    return this.#log.whileOpen(() => this.#log.readDeadLetter(id));
  }

  discard(ids: readonly string[]): Promise<number> {
    return this.#log.removeDeadLetters(ids);
  }

  async replay(ids: readonly string[]): Promise<ReplayResult> {
    const result: ReplayResult = { replayed: [], requested: [], refused: [] };
    const letters: DeadLetter[] = [];
    const writer = await this.#log.whileOpen(() => {
      for (const id of new Set(ids)) {
        const letter = this.#log.readDeadLetter(id);
        if (!letter) result.refused.push({ id, reason: 'no such dead letter' });
        else if (!letter.record) result.refused.push({ id, reason: 'its bytes are not a record' });
        else letters.push(letter);
      }
      return letters.length > 0 && this.#log.tryBecomeWriter();
    });
    if (letters.length === 0) return result;
    const ids_ = letters.map((l) => l.id);
    if (writer) {
      await this.#log.append(letters.map((l) => l.record as IngestRecord));
      await this.#log.removeDeadLetters(ids_);
      result.replayed.push(...ids_);
    } else {
      await this.#log.requestReplays(ids_);
      result.requested.push(...ids_);
    }
    return result;
  }
}

class EmbeddedConsumer implements EmbeddedLogConsumer {
  readonly #log: EmbeddedLog;
  readonly #group: string;
  readonly #topics: readonly RecordType[];
  /** Where the group goes on in each topic: read from its committed positions at the first poll. */
  #position: Map<RecordType, number> | null = null;
  #next = 0; // round-robin start, so no topic starves the others

  constructor(log: EmbeddedLog, group: string, topics: readonly RecordType[]) {
    this.#log = log;
    this.#group = group;
    this.#topics = topics;
  }

  async poll(options: { max?: number; waitMs?: number } = {}): Promise<PolledMessage[]> {
    const max = options.max ?? 500;
    const deadline = Date.now() + (options.waitMs ?? 0);
    let waited = false;
    for (;;) {
      // Read while the environment is open (a reopen releasing its pages waits for the read, and it for one).
      const batch = await this.#log.whileOpen(() => {
        if (this.#log.closed) return null;
        if (waited) this.#log.refresh();
        return this.#readAvailable(max);
      });
      if (batch === null) return [];
      const remaining = deadline - Date.now();
      if (batch.length > 0 || remaining <= 0) return batch;
      await this.#log.waitForAppend(remaining);
      waited = true;
    }
  }

  #positions(): Map<RecordType, number> {
    if (!this.#position) {
      this.#position = new Map(
        this.#topics.map((topic) => [topic, this.#log.committedPosition(this.#group, topic)]),
      );
    }
    return this.#position;
  }

  #readAvailable(max: number): PolledMessage[] {
    const batch: PolledMessage[] = [];
    for (let i = 0; i < this.#topics.length && batch.length < max; i++) {
      const topic = this.#topics[(this.#next + i) % this.#topics.length] as RecordType;
      const positions = this.#positions();
      const from = positions.get(topic) ?? 0;
      const messages = this.#log.read(topic, from, max - batch.length);
      const last = messages.at(-1);
      if (last) positions.set(topic, last.offset + 1);
      batch.push(...messages);
    }
    this.#next = (this.#next + 1) % this.#topics.length;
    return batch;
  }

  async commit(messages: readonly LogPosition[]): Promise<void> {
    const highest = new Map<RecordType, number>();
    for (const m of messages) highest.set(m.topic, Math.max(highest.get(m.topic) ?? -1, m.offset));
    await this.#log.whileOpen(async () => {
      for (const [topic, offset] of highest) {
        if (offset + 1 > this.#log.committedPosition(this.#group, topic)) {
          await this.#log.commitPosition(this.#group, topic, offset + 1);
        }
      }
    });
  }

  /** One process holds the embedded log, and a group's consumer is its only one: it never loses them. */
  assertHeld(): void {}

  holding(): number {
    return 0;
  }

  async close(): Promise<void> {}
}

/** When a stored record was received, or null when its bytes do not decode. */
function receivedAt(value: Uint8Array, topic: RecordType): number | null {
  try {
    return decodeRecord(value, topic).received_at;
  } catch {
    return null;
  }
}
