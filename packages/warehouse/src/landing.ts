// consumeInBatches: the loop both consumers run. It reads the record log through the RecordLog
// interface only (embedded or Kafka, unchanged), gathers a batch bounded by size and by time (from the
// batch's first record), hands it to `land` (which writes it to the warehouse), and commits the batch's
// offsets only once `land` has succeeded: delivery is at least once, and every table is keyed so that a
// batch landed twice is stored once. A retryable failure is retried with backoff (the same batch, never
// skipped); any other failure stops the loop, uncommitted, so the batch is delivered again on restart.
import type { LogConsumer, LogMessage } from '@tally/log';
import { backoffDelay } from './retry.ts';

export interface BatchOptions {
  /** Largest batch, in records. */
  maxRecords: number;
  /** Longest a record waits in a batch before the batch is landed, in ms. */
  maxWaitMs: number;
}

export interface BatchLoopOptions extends BatchOptions {
  consumer: LogConsumer;
  /** Writes a batch; resolves once it is stored. */
  land(messages: readonly LogMessage[]): Promise<void>;
  /** Called after a batch is landed and committed. */
  onLanded?(messages: readonly LogMessage[]): void;
  /** Called before a failed batch is retried. */
  onRetry?(error: unknown, attempt: number): void;
  /** How long to wait for records when there are none, before checking for stop again. */
  idleWaitMs?: number;
  maxRetryDelayMs?: number;
}

export interface RunningBatchLoop {
  /** Finishes the batch in hand (landed and committed, or left uncommitted on failure), then resolves. */
  stop(): Promise<void>;
  /** Settles when the loop ends: resolves after stop(), rejects on a non-retryable failure. */
  readonly done: Promise<void>;
}

const isRetryable = (error: unknown) => (error as { retryable?: unknown })?.retryable === true;

export function consumeInBatches(options: BatchLoopOptions): RunningBatchLoop {
  let stopping = false;
  let wakeUp: (() => void) | null = null;
  const idleWaitMs = options.idleWaitMs ?? Math.min(options.maxWaitMs, 500);

  async function gather(): Promise<LogMessage[]> {
    const batch: LogMessage[] = [];
    let deadline = Number.POSITIVE_INFINITY;
    while (!stopping && batch.length < options.maxRecords) {
      const waitMs = batch.length === 0 ? idleWaitMs : deadline - Date.now();
      if (batch.length > 0 && waitMs <= 0) break;
      const messages = await options.consumer.poll({ max: options.maxRecords - batch.length, waitMs });
      if (messages.length === 0) {
        if (batch.length > 0) break;
        continue;
      }
      if (batch.length === 0) deadline = Date.now() + options.maxWaitMs;
      batch.push(...messages);
    }
    return batch;
  }

  async function landWithRetry(batch: readonly LogMessage[]): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await options.land(batch);
        return true;
      } catch (error) {
        if (!isRetryable(error)) throw error;
        if (stopping) return false; // stop now; the batch stays uncommitted and comes back on restart
        options.onRetry?.(error, attempt);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoffDelay(attempt, 100, options.maxRetryDelayMs ?? 30_000));
          wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wakeUp = null;
      }
    }
  }

  const done = (async () => {
    while (!stopping) {
      const batch = await gather();
      if (batch.length === 0) continue;
      if (!(await landWithRetry(batch))) break;
      await options.consumer.commit(batch);
      options.onLanded?.(batch);
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
