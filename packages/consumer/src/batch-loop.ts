// consumeInBatches: the loop every consumer runs. It reads the record log through the RecordLog interface
// only (embedded or Kafka), gathers a batch bounded by size and by time (from when its first record arrived),
// has each record prepared (checked and turned into a row) and the batch landed, and commits the batch's
// offsets only once every record of it is either landed or set aside in the dead-letter store: delivery is
// at least once, and the landers are idempotent, so a batch landed twice is stored once.
//
// No record can stop the loop. A record that cannot be prepared is set aside at once. A batch the
// warehouse refuses because of its values is split in halves, and the halves landed, until the rows at
// fault are single records, which are set aside; the others land. A batch the warehouse refuses for its
// size alone is landed in halves too, setting nothing aside. An outage is retried with the same batch,
// with backoff, for as long as it lasts, and a failure of the warehouse itself (see failures.ts)
// likewise: neither sets anything aside; so is a commit the log refuses for now (a full disk). Stopping
// leaves the batch in hand uncommitted. The loop tells `progress` (progress.ts) what it holds, each
// failure and each commit, from which the process's readiness says whether the group is stalled.
// Design notes: docs/design/consumers.md.
import { backoffDelay } from '@tally/backoff';
import {
  type DeadLetter,
  type DeadLetterStore,
  deadLetterId,
  type LogConsumer,
  type LogMessage,
  OwnershipLostError,
  type PolledMessage,
} from '@tally/log';
import { describeForDeadLetter, describeForLog, failureKind } from './failures.ts';
import type { ConsumerLogger } from './logger.ts';
import type { ConsumerMetrics } from './metrics.ts';
import type { GroupProgress } from './progress.ts';

export interface BatchOptions {
  /** Largest batch, in records. */
  maxRecords: number;
  /** Longest a record waits in a batch before the batch is landed, in ms. */
  maxWaitMs: number;
}

/** A record and the row (or rows) it became. */
export interface Prepared<Row> {
  message: LogMessage;
  row: Row;
}

/** What a consumer does with its records: the part that knows the warehouse's tables. */
export interface Lander<Row> {
  /** Checks one record and turns it into what `land` writes; throws when the record itself cannot be landed. */
  prepare(message: LogMessage): Row;
  /**
   * Writes prepared records, idempotently: after a crash a batch is landed again, and a refused batch is
   * landed again in halves. `holding` says whether the records' partitions are still this consumer's.
   */
  land(items: readonly Prepared<Row>[], holding?: Holding): Promise<void>;
}

/** The consumer's hold on the partitions of the records it lands (LogConsumer.assertHeld, holding). */
export interface Holding {
  /**
   * Throws OwnershipLostError once the records' partitions are another consumer's: a lander calls it before
   * a write that must not be a stale one (computed from what it read, which the new holder computes again).
   */
  assert(): void;
  /** Changes when what a lander keeps in memory about these partitions' keys may be stale (LogConsumer.holding). */
  readonly id: number;
}

export interface BatchLoopOptions<Row> extends BatchOptions {
  /** The consumer group, as the dead letters and the metrics name it. */
  group: string;
  consumer: LogConsumer;
  deadLetters: DeadLetterStore;
  lander: Lander<Row>;
  logger?: ConsumerLogger | undefined;
  metrics?: ConsumerMetrics | undefined;
  /** Told what the loop holds, each failure and each commit (the process's readiness reads it). */
  progress?: GroupProgress | undefined;
  /** How long to wait for records when there are none, before checking for stop again. */
  idleWaitMs?: number;
  /** Longest wait between two attempts of a failing batch. */
  maxRetryDelayMs?: number;
  /** Called after a batch is landed (and set aside) and committed, with how long that took (ms). */
  onLanded?(messages: readonly PolledMessage[], setAside: readonly DeadLetter[], durationMs: number): void;
}

export interface RunningBatchLoop {
  /** Finishes the batch in hand (landed and committed, or left uncommitted), then resolves. */
  stop(): Promise<void>;
  /** Settles when the loop ends: resolves after stop(); rejects only if the record log itself fails. */
  readonly done: Promise<void>;
}

/** Raised inside the loop when stop() interrupts a retry: the batch stays uncommitted. */
class Stopped extends Error {}

/**
 * When a batch whose first message is `first` must be landed: maxWaitMs after that record arrived at the
 * gateway, not after it was polled. A record that waited while the previous batch landed has used that
 * time already: counted from the poll, every batch behind a slow one waited maxWaitMs more, which under
 * load made a record's wait a landing plus a full maxWaitMs. Never later than maxWaitMs from now (a clock
 * ahead of this one), and a message that is not a record counts from now.
 */
export function batchDeadline(first: PolledMessage, maxWaitMs: number, now = Date.now()): number {
  const arrived = first.record?.received_at;
  if (typeof arrived !== 'number') return now + maxWaitMs;
  return Math.min(now + maxWaitMs, Math.max(now, arrived + maxWaitMs));
}

export function consumeInBatches<Row>(options: BatchLoopOptions<Row>): RunningBatchLoop {
  const { consumer, lander, group, logger, metrics, progress } = options;
  let stopping = false;
  let wakeUp: (() => void) | null = null;
  const idleWaitMs = options.idleWaitMs ?? Math.min(options.maxWaitMs, 500);
  const maxDelay = options.maxRetryDelayMs ?? 30_000;

  async function gather(): Promise<PolledMessage[]> {
    const batch: PolledMessage[] = [];
    let deadline = Number.POSITIVE_INFINITY;
    while (!stopping && batch.length < options.maxRecords) {
      // Past the deadline, what is there already still joins the batch (a poll that does not wait), so
      // that a backlog is landed in full batches.
      const waitMs = batch.length === 0 ? idleWaitMs : Math.max(0, deadline - Date.now());
      const messages = await consumer.poll({ max: options.maxRecords - batch.length, waitMs });
      if (messages.length === 0) {
        if (batch.length > 0) break;
        continue;
      }
      if (batch.length === 0) deadline = batchDeadline(messages[0] as PolledMessage, options.maxWaitMs);
      batch.push(...messages);
    }
    return batch;
  }

  /** Waits before the next attempt; interrupted by stop(). */
  async function pause(attempt: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, backoffDelay(attempt, 100, Math.random(), maxDelay));
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wakeUp = null;
    if (stopping) throw new Stopped();
  }

  function letter(message: PolledMessage, error: unknown): DeadLetter {
    const described =
      message.record === null
        ? { error_code: 'undecodable', error: message.error }
        : describeForDeadLetter(error);
    return {
      id: deadLetterId(group, message),
      group,
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
      failed_at: Date.now(),
      ...described,
      record: message.record,
      ...(message.record === null && { raw: message.raw }),
    };
  }

  /**
   * Lands `items`; on a failure the records cause, lands each half on its own, down to single records,
   * which go to `setAside`. Outages and failures of the warehouse are retried until they pass.
   */
  async function landOrSplit(
    items: readonly Prepared<Row>[],
    setAside: DeadLetter[],
    held: Holding,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        held.assert();
        await lander.land(items, held);
        return;
      } catch (error) {
        if (error instanceof OwnershipLostError) throw error;
        const kind = failureKind(error);
        metrics?.failures.inc({ group, kind });
        progress?.failed(describeForLog(error));
        if (kind === 'too-large' && items.length > 1) {
          logger?.warn(
            { group, records: items.length, ...describeForLog(error) },
            `${group} batch too large for the warehouse; landing it in halves`,
          );
          const middle = Math.ceil(items.length / 2);
          await landOrSplit(items.slice(0, middle), setAside, held);
          await landOrSplit(items.slice(middle), setAside, held);
          return;
        }
        if (kind === 'records') {
          const [only] = items;
          if (items.length === 1 && only) {
            setAside.push(letter(only.message, error));
            return;
          }
          const middle = Math.ceil(items.length / 2);
          await landOrSplit(items.slice(0, middle), setAside, held);
          await landOrSplit(items.slice(middle), setAside, held);
          return;
        }
        if (stopping) throw new Stopped();
        const described = { group, records: items.length, attempt, ...describeForLog(error) };
        if (kind === 'outage') logger?.warn(described, `${group} batch failed; retrying`);
        else logger?.error(described, `${group} batch refused by the warehouse; retrying until it is mended`);
        await pause(attempt);
      }
    }
  }

  /** Makes the letters durable (retrying while the store is unavailable) and reports each one. */
  async function setAsideDurably(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await options.deadLetters.add(letters);
        break;
      } catch (error) {
        if (stopping) throw new Stopped();
        progress?.failed(describeForLog(error));
        logger?.warn({ group, attempt, ...describeForLog(error) }, 'dead-letter store unavailable; retrying');
        await pause(attempt);
      }
    }
    for (const l of letters) {
      metrics?.deadLetters.inc({ group, type: l.topic, code: l.error_code });
      // Where it was and why, never what it holds: `tally dead-letters show <id>` shows the record.
      logger?.warn(
        {
          group,
          type: l.topic,
          partition: l.partition,
          offset: l.offset,
          dead_letter: l.id,
          code: l.error_code,
        },
        'record set aside as undeliverable',
      );
    }
  }

  /**
   * Commits the batch, retrying while the log says it may succeed later (a full disk: the embedded log's
   * commit fails until there is room); any other failure of the log ends the loop, as before.
   */
  async function commitDurably(batch: readonly PolledMessage[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await consumer.commit(batch);
        return;
      } catch (error) {
        if ((error as { retryable?: unknown })?.retryable !== true) throw error;
        if (stopping) throw new Stopped();
        logger?.warn({ group, attempt, ...describeForLog(error) }, 'commit failed; retrying');
        await pause(attempt);
      }
    }
  }

  async function handle(batch: readonly PolledMessage[]): Promise<void> {
    const started = performance.now();
    const setAside: DeadLetter[] = [];
    const prepared: Prepared<Row>[] = [];
    for (const message of batch) {
      if (message.record === null) {
        setAside.push(letter(message, null));
        continue;
      }
      try {
        prepared.push({ message, row: lander.prepare(message) });
      } catch (error) {
        setAside.push(letter(message, error));
      }
    }
    const held: Holding = { assert: () => consumer.assertHeld(batch), id: consumer.holding() };
    try {
      if (prepared.length > 0) await landOrSplit(prepared, setAside, held);
      held.assert();
      await setAsideDurably(setAside);
      await commitDurably(batch);
    } catch (error) {
      if (!(error instanceof OwnershipLostError)) throw error;
      // Another member holds these records now and lands them; nothing is committed here.
      logger?.warn(
        { group, records: batch.length },
        `${group} partitions moved to another member; batch left to it`,
      );
      return;
    }
    progress?.committed();
    const asideIds = new Set(setAside.map((l) => l.id));
    for (const { message } of prepared) {
      if (!asideIds.has(deadLetterId(group, message))) metrics?.landed.inc({ group, type: message.topic });
    }
    options.onLanded?.(batch, setAside, Math.round(performance.now() - started));
  }

  const done = (async () => {
    try {
      while (!stopping) {
        const batch = await gather();
        if (batch.length === 0) continue;
        progress?.holding(batch.length);
        await handle(batch);
      }
    } catch (error) {
      if (!(error instanceof Stopped)) throw error;
    }
  })();

  return {
    done,
    async stop() {
      stopping = true;
      wakeUp?.();
      await done.catch(() => {});
    },
  };
}
