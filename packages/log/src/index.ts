// The record log: where the gateway appends accepted records and from which consumers read them.
// One small interface with one folder per backend (embedded/: LMDB; kafka/: Avro on per-type topics). Cross-cutting behaviour
// (timeouts, metrics) wraps a backend instead of living inside it: see withAppendTimeout.
import type { IngestRecord, RecordType } from '@tally/contract';
import { RECORD_TYPES } from '@tally/contract';

export {
  type EmbeddedLogOptions,
  type EmbeddedRecordLog,
  type GroupPosition,
  openEmbeddedLog,
} from './embedded/index.ts';
export { EmbeddedLogLockedError } from './embedded/writer-lock.ts';
export { avroSchemas, fromAvroValue, toAvroValue } from './kafka/avro.ts';
export { type KafkaLogOptions, openKafkaLog, topicName } from './kafka/index.ts';
export { openRecordLog } from './open.ts';

/** A record as read back from the log, with its position in its topic. */
export interface LogMessage {
  topic: RecordType;
  /** Partition of the topic (always 0 in the embedded log). */
  partition: number;
  /** Position in its topic's partition. */
  offset: number;
  record: IngestRecord;
}

export interface LogHealth {
  ok: boolean;
  detail?: string;
}

export interface RecordLog {
  /** Appends records; resolves only once every one of them is durable, rejects if any is not. */
  append(records: readonly IngestRecord[]): Promise<void>;
  /** A consumer in `group` over `topics` (default: all four record types), resuming at the group's commit. */
  consumer(options: { group: string; topics?: readonly RecordType[] }): LogConsumer;
  health(): Promise<LogHealth>;
  close(): Promise<void>;
}

export interface LogConsumer {
  /** Up to `max` messages after this consumer's position; waits up to `waitMs` for the first one. */
  poll(options?: { max?: number; waitMs?: number }): Promise<LogMessage[]>;
  /** Marks these messages, and every earlier one of their topics, as processed by the group. */
  commit(messages: readonly LogMessage[]): Promise<void>;
  close(): Promise<void>;
}

/** Records are kept per type, as Kafka keeps them per topic. */
export const topicOf = (record: IngestRecord): RecordType => record.type;
export const ALL_TOPICS: readonly RecordType[] = RECORD_TYPES;

/**
 * The key that keeps related records in order: one customer's revenue (project + customer_id), one
 * visitor's analytics events (project + visitor_fingerprint).
 */
export function partitionKey(record: IngestRecord): string {
  if (record.type === 'revenue') return `${record.project_id}:${record.data.customer_id}`;
  return `${record.project_id}:${record.data.visitor_fingerprint ?? ''}`;
}

/** Raised when the log cannot make records durable in time; the gateway answers 503 with Retry-After. */
export class LogUnavailableError extends Error {
  readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LogUnavailableError';
  }
}

/**
 * Wraps a log so that append rejects with LogUnavailableError when the backend has not made the records
 * durable within `timeoutMs` (or fails). The backend may still finish the write later: the client, told
 * 503, retries, and consumers deduplicate by record id.
 */
export function withAppendTimeout(log: RecordLog, timeoutMs: number): RecordLog {
  return {
    consumer: (o) => log.consumer(o),
    health: () => log.health(),
    close: () => log.close(),
    append(records) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new LogUnavailableError(`record log did not confirm within ${timeoutMs} ms`)),
          timeoutMs,
        );
        Promise.resolve()
          .then(() => log.append(records))
          .then(
            () => {
              clearTimeout(timer);
              resolve();
            },
            (error: unknown) => {
              clearTimeout(timer);
              reject(
                error instanceof LogUnavailableError
                  ? error
                  : new LogUnavailableError('record log append failed', { cause: error }),
              );
            },
          );
      });
    },
  };
}
