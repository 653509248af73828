// The record log across threads: several gateway event loops (worker threads) append to the one log their
// process holds, because the embedded log has one writer (offsets are assigned in its memory, and its
// writer lock is per process). A worker's appendThroughPort() gathers the appends of one event-loop turn
// into one message over a MessagePort (a round trip costs ~9 µs per record alone, ~1 µs in batches of 8);
// serveAppends() in the thread that holds the log appends each message's records in one call, so all
// workers' records share the writer's group commit, and answers once they are durable. An append still
// resolves only when its record is durable: nothing is acknowledged on the strength of the message alone.
// The records travel encoded (embedded/record-encoding.ts): the worker encodes each record as the embedded
// log stores it, and a turn's bytes go as one transferred buffer, which the log writes as they are
// (appendEncoded); the thread that holds the log neither rebuilds the records' objects nor encodes them.
// A worker's health is the held log's, asked over the same port: a worker that kept its own memory of a
// failed append would stay unready after the log had recovered (space back on a full disk), and a load
// balancer that stopped sending it appends would never let it find out.
import type { MessagePort } from 'node:worker_threads';
import type { IngestRecord, RecordType } from '@tally/contract';
import { decodeRecord, type EncodedRecord, encodeRecord } from '../embedded/record-encoding.ts';
import {
  type DeadLetterStore,
  type LogConsumer,
  type LogHealth,
  LogUnavailableError,
  type RecordLog,
} from '../record-log.ts';

/** A worker's batch of records, encoded: record i is bytes[ends[i - 1] ?? 0, ends[i]) of type types[i]. */
interface AppendRequest {
  id: number;
  types: RecordType[];
  ends: number[];
  bytes: Uint8Array;
}
interface AppendAnswer {
  id: number;
  /** Why the log refused the batch (the class and message of its error; no record data). */
  error?: string;
}
/** A worker asks for the log's health. */
interface HealthQuestion {
  id: number;
  health: true;
}
interface HealthAnswer {
  id: number;
  health: LogHealth;
}

/** Appends the batches that arrive on `port` to `log`, answering each once durable (or failed). */
export function serveAppends(log: RecordLog, port: MessagePort): void {
  const appendEncoded = encodedAppender(log);
  port.on('message', (request: AppendRequest | HealthQuestion) => {
    if ('health' in request) {
      log
        .health()
        .catch((): LogHealth => ({ ok: false, detail: 'health check failed' }))
        .then((health) => port.postMessage({ id: request.id, health } satisfies HealthAnswer));
      return;
    }
    const records: EncodedRecord[] = [];
    let start = 0;
    for (const [i, type] of request.types.entries()) {
      const end = request.ends[i] as number;
      records.push({ type, bytes: request.bytes.subarray(start, end) });
      start = end;
    }
    appendEncoded(records).then(
      () => port.postMessage({ id: request.id } satisfies AppendAnswer),
      (error: unknown) =>
        port.postMessage({
          id: request.id,
          error: error instanceof Error ? `${error.name}: ${error.message}` : 'append failed',
        } satisfies AppendAnswer),
    );
  });
}

/** The log's appendEncoded (the embedded log's), or, for any other log, its append of the decoded records. */
function encodedAppender(log: RecordLog): (records: EncodedRecord[]) => Promise<void> {
  const encoded = log as RecordLog & { appendEncoded?: (records: readonly EncodedRecord[]) => Promise<void> };
  if (typeof encoded.appendEncoded === 'function')
    return (records) => encoded.appendEncoded?.(records) as Promise<void>;
  return async (records) => log.append(records.map((record) => decodeRecord(record.bytes)));
}

const GONE = 'the thread holding the record log is gone';

const notHere = () =>
  Promise.reject(
    new Error("a gateway worker's record log only appends; dead letters are kept where it is held"),
  );

interface Waiting {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * A RecordLog that appends through `port` to the log another thread serves (serveAppends). It only
 * appends: consumers and the dead-letter store belong to the thread that holds the log.
 */
export function appendThroughPort(port: MessagePort): RecordLog {
  return new PortAppender(port);
}

class PortAppender implements RecordLog {
  readonly #port: MessagePort;
  /** Records of this turn, encoded (views of the encoder's buffer until #send copies them), and who waits. */
  #records: Uint8Array[] = [];
  #types: RecordType[] = [];
  #size = 0;
  #waiters: Waiting[] = [];
  #scheduled = false;
  readonly #inFlight = new Map<number, Waiting[]>();
  /** Health questions waiting for their answer. */
  readonly #asking = new Map<number, (health: LogHealth) => void>();
  #nextId = 0;
  /** The serving side is gone (its port closed). */
  #gone = false;
  #closed = false;
  #drained: (() => void) | null = null;

  constructor(port: MessagePort) {
    this.#port = port;
    port.on('message', (answer: AppendAnswer | HealthAnswer) => {
      if ('health' in answer) {
        this.#asking.get(answer.id)?.(answer.health);
        this.#asking.delete(answer.id);
      } else this.#answered(answer);
    });
    // The serving side went away (its thread ended): nothing in flight will be confirmed.
    port.on('close', () => this.#failAll(GONE));
  }

  append(records: readonly IngestRecord[]): Promise<void> {
    if (this.#closed) return Promise.reject(new LogUnavailableError('record log is closed'));
    return new Promise<void>((resolve, reject) => {
      // All encoded before any is queued: a record that cannot be encoded fails its own append only.
      const encoded = records.map(encodeRecord);
      for (const [i, bytes] of encoded.entries()) {
        this.#records.push(bytes);
        this.#types.push((records[i] as IngestRecord).type);
        this.#size += bytes.byteLength;
      }
      this.#waiters.push({ resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // After this turn's I/O callbacks: every request parsed in this turn shares the message.
        setImmediate(this.#send);
      }
    });
  }

  readonly #send = () => {
    this.#scheduled = false;
    const id = this.#nextId++;
    const waiters = this.#waiters;
    // One buffer of the turn's own, transferred rather than copied (a view of the encoder's buffer would
    // send the whole of it).
    const bytes = new Uint8Array(this.#size);
    const ends: number[] = [];
    let end = 0;
    for (const record of this.#records) {
      bytes.set(record, end);
      end += record.byteLength;
      ends.push(end);
    }
    const types = this.#types;
    this.#records = [];
    this.#types = [];
    this.#size = 0;
    this.#waiters = [];
    this.#inFlight.set(id, waiters);
    try {
      this.#port.postMessage({ id, types, ends, bytes } satisfies AppendRequest, [bytes.buffer]);
    } catch (error) {
      this.#inFlight.delete(id);
      for (const w of waiters)
        w.reject(new LogUnavailableError('record log append failed', { cause: error }));
    }
  };

  #answered(answer: AppendAnswer): void {
    const waiters = this.#inFlight.get(answer.id);
    if (!waiters) return;
    this.#inFlight.delete(answer.id);
    if (answer.error === undefined) {
      for (const w of waiters) w.resolve();
    } else {
      const error = new LogUnavailableError(`record log append failed (${answer.error})`);
      for (const w of waiters) w.reject(error);
    }
    if (this.#inFlight.size === 0 && this.#waiters.length === 0) this.#drained?.();
  }

  #failAll(reason: string): void {
    const error = new LogUnavailableError(reason);
    for (const waiters of this.#inFlight.values()) for (const w of waiters) w.reject(error);
    this.#inFlight.clear();
    this.#gone = true;
    for (const answer of this.#asking.values()) answer({ ok: false, detail: GONE });
    this.#asking.clear();
    this.#drained?.();
  }

  consumer(): LogConsumer {
    throw new Error("a gateway worker's record log only appends; consumers read the log where it is held");
  }

  readonly deadLetters: DeadLetterStore = {
    add: notHere,
    list: notHere,
    get: notHere,
    replay: notHere,
    discard: notHere,
  };

  /** The health of the log the other thread holds (its own answer), or why it cannot be had. */
  health(): Promise<LogHealth> {
    if (this.#closed) return Promise.resolve({ ok: false, detail: 'closed' });
    if (this.#gone) return Promise.resolve({ ok: false, detail: GONE });
    return new Promise((resolve) => {
      const id = this.#nextId++;
      this.#asking.set(id, resolve);
      try {
        this.#port.postMessage({ id, health: true } satisfies HealthQuestion);
      } catch {
        this.#asking.delete(id);
        resolve({ ok: false, detail: GONE });
      }
    });
  }

  /** Waits for the appends in flight to be answered, then closes the port. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#inFlight.size > 0 || this.#waiters.length > 0) {
      await new Promise<void>((resolve) => {
        this.#drained = resolve;
      });
    }
    this.#port.close();
  }
}
