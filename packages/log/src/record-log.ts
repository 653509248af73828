// The record log's interface: where the gateway appends accepted records, from which consumers read them,
// and where a consumer sets aside a record it cannot land (the dead-letter store). Backends (embedded/,
// kafka/) implement it and import it from here; index.ts only re-exports.
// Design notes: docs/design/record-log.md.
import type { IngestRecord, RecordType } from '@tally/contract';
import { RECORD_TYPES } from '@tally/contract';

/** Where a message is in the log. */
export interface LogPosition {
  topic: RecordType;
  /** Partition of the topic (always 0 in the embedded log). */
  partition: number;
  /** Position in its topic's partition. */
  offset: number;
}

/** A record as read back from the log, with its position in its topic. */
export interface LogMessage extends LogPosition {
  record: IngestRecord;
}

/**
 * A message whose bytes are not a record this log can decode (a producer other than Tally's gateway wrote
 * it to a Kafka topic, or with a schema the registry does not have). It is handed to the consumer like any
 * other message, so that the consumer sets it aside and goes on.
 */
export interface UndecodableMessage extends LogPosition {
  record: null;
  /** The message's bytes as they are in the log. */
  raw: Uint8Array;
  /** Why it could not be decoded. */
  error: string;
}

export type PolledMessage = LogMessage | UndecodableMessage;

export interface LogHealth {
  ok: boolean;
  detail?: string;
}

/**
 * How far a consumer group is behind in one topic: the records appended and not yet committed by it (in
 * every partition), and when the oldest of them was appended. What the health view shows as consumer lag
 * and as the age of the oldest record not landed.
 */
export interface GroupBacklog {
  group: string;
  topic: RecordType;
  /** Records at or after the group's committed positions. */
  lag: number;
  /**
   * When the oldest of them reached the log (ms): its `received_at` on the embedded log; on Kafka the
   * message's timestamp (the producer's send time, within a linger of `received_at`), to the second. Null
   * when the group is not behind.
   */
  oldest_at: number | null;
}

/**
 * A setting of the log's storage that differs from what the configuration says (Kafka: a topic created
 * otherwise, by hand or by an older configuration, or changed since). The log never changes it: it is
 * reported (a log line, a metric, the health view), and the operator decides which one is right.
 */
export interface LogSettingMismatch {
  topic: string;
  setting: 'partitions' | 'replication.factor' | 'min.insync.replicas' | 'retention.ms' | 'retention.bytes';
  /** What the configuration says. */
  expected: number;
  /** What the topic has. */
  actual: number;
  /** The configuration setting that says it (KAFKA_PARTITIONS, LOG_RETENTION_HOURS, …). */
  configured_by: string;
}

/** How long and how much of a record type the log keeps, whether its consumers have read it or not. */
export interface TopicRetention {
  topic: RecordType;
  /** Kafka's retention.ms of the topic; null when unbounded. */
  retention_ms: number | null;
  /** Kafka's retention.bytes of the topic, per partition; null when unbounded. */
  retention_bytes: number | null;
}

export interface LogSettingsCheck {
  /** When the log's storage was asked (ms). */
  checked_at: number;
  mismatches: LogSettingMismatch[];
  retention: TopicRetention[];
}

export interface BacklogOptions {
  /** Whether to find when each group's oldest uncommitted record came (default true). */
  oldest?: boolean;
}

export interface RecordLog {
  /** Appends records; resolves only once every one of them is durable, rejects if any is not. */
  append(records: readonly IngestRecord[]): Promise<void>;
  /**
   * Every consumer group's backlog per topic it has committed in. The backends have it; a log that only
   * appends for another (a gateway thread's port, a test's fake) has not. With `oldest: false` the lag
   * alone (`oldest_at` null): what a consumer polls for its readiness, without Kafka's search by time.
   */
  backlog?(options?: BacklogOptions): Promise<GroupBacklog[]>;
  /**
   * Compares the settings of the log's storage with the configuration now, and remembers the answer. Kafka
   * has them (its topics' partitions, replication and retention, which outlive the process that created
   * them); the embedded log keeps nothing it could not read regardless of its settings, and has not.
   */
  checkSettings?(): Promise<LogSettingsCheck>;
  /** The last answer of checkSettings (the log checks once as it opens), or null: what metrics read. */
  lastSettingsCheck?(): LogSettingsCheck | null;
  /** A consumer in `group` over `topics` (default: all four record types), resuming at the group's commit. */
  consumer(options: { group: string; topics?: readonly RecordType[] }): LogConsumer;
  /** The records consumers have set aside as undeliverable. */
  readonly deadLetters: DeadLetterStore;
  health(): Promise<LogHealth>;
  close(): Promise<void>;
}

export interface LogConsumer {
  /**
   * Up to `max` messages after this consumer's position; waits up to `waitMs` for the first one, unless no
   * more can come before the messages in hand are committed (then it answers at once).
   */
  poll(options?: { max?: number; waitMs?: number }): Promise<PolledMessage[]>;
  /** Marks these messages, and every earlier one of their topics, as processed by the group. */
  commit(messages: readonly LogPosition[]): Promise<void>;
  /**
   * Throws OwnershipLostError when the partitions of these polled messages are no longer this consumer's
   * (another member of the group was given them): nothing more may be written for them, and they are not
   * committed; their new holder gets them again. A log whose group has one consumer never throws.
   */
  assertHeld(messages: readonly LogPosition[]): void;
  /**
   * Which holding of its partitions the consumer is in: a number that changes whenever what it holds may
   * have been written for by another member since (it joined the group again, or lost its partitions).
   * What a consumer keeps in memory about its records' keys (the visits of its visitors) is good for one
   * holding only. A log whose group has one consumer keeps one holding.
   */
  holding(): number;
  close(): Promise<void>;
}

/**
 * The consumer lost the partitions of records it holds (a rebalance gave them to another member while it
 * was kept from the group longer than the group waits): what it writes for them from now on could overwrite
 * what the new holder writes, so it stops, leaves them uncommitted, and goes on with what it is given next.
 */
export class OwnershipLostError extends Error {
  constructor(message = 'the partitions of the records in hand were given to another member of the group') {
    super(message);
    this.name = 'OwnershipLostError';
  }
}

/**
 * A record a consumer group could not land because of the record itself (the warehouse refused its
 * values, it could not be decoded, it breaks the contract), set aside so that the group goes on. It
 * holds the record (payload included): it is shown by `tally dead-letters show`, never logged.
 */
export interface DeadLetter extends LogPosition {
  /** `<group>:<topic>:<partition>:<offset>`: the same record set aside twice by a group is one letter. */
  id: string;
  group: string;
  /** When it was set aside (ms). */
  failed_at: number;
  /** What refused it, in full (may quote the record's values). */
  error: string;
  /** A short code for the kind of failure: `warehouse-<ClickHouse code>`, `contract`, `undecodable`, … */
  error_code: string;
  /** The record; null when the log could not decode the message (then `raw` has its bytes). */
  record: IngestRecord | null;
  raw?: Uint8Array | null;
}

export const deadLetterId = (group: string, position: LogPosition): string =>
  `${group}:${position.topic}:${position.partition}:${position.offset}`;

/** The order letters are listed in: when they were set aside, then where they were in the log. */
export function byFailedAt(a: DeadLetter, b: DeadLetter): number {
  return (
    a.failed_at - b.failed_at ||
    (a.group < b.group ? -1 : a.group > b.group ? 1 : 0) ||
    (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0) ||
    a.partition - b.partition ||
    a.offset - b.offset
  );
}

/** The outcome of a replay, per letter. */
export interface ReplayResult {
  /** Appended to their topics again (and removed from the store). */
  replayed: string[];
  /** Asked of the process that appends to the log (the embedded log's writer); it replays them shortly. */
  requested: string[];
  /** Not replayable (no such letter, or no decodable record), with why. */
  refused: Array<{ id: string; reason: string }>;
}

export interface DeadLetterStore {
  /** Sets letters aside; resolves once they are durable. A letter with an existing id replaces it. */
  add(letters: readonly DeadLetter[]): Promise<void>;
  /** Every letter, oldest first. */
  list(): Promise<DeadLetter[]>;
  get(id: string): Promise<DeadLetter | null>;
  /** Puts the letters' records back on their topics, so that their consumers land them again. */
  replay(ids: readonly string[]): Promise<ReplayResult>;
  /** Deletes letters for good; resolves to how many there were. */
  discard(ids: readonly string[]): Promise<number>;
}

/** Records are kept per type, as Kafka keeps them per topic. */
export const topicOf = (record: IngestRecord): RecordType => record.type;
export const ALL_TOPICS: readonly RecordType[] = RECORD_TYPES;

/**
 * The key that keeps related records together and in order. Revenue: one customer (project +
 * customer_id): its MRR is folded from its records. Analytics: one visitor (project + the visitor id the
 * records are stored with: the one the client named, or the one the gateway derived), because the visits
 * are folded from all of a visitor's pageviews and events together; with the same number of partitions in
 * every topic and the co-partitioned assignment (kafka/co-partitioned-assigner.ts), one member of the group
 * holds all of a visitor's records. The session when there is no visitor id. Copies of one record (a
 * client's retries keep the record id, the visitor and the customer) share the key, so one consumer sees
 * them in order and the first copy wins; the exception is a retry of a record whose visitor id the gateway
 * derived, arriving after the UTC midnight that rotates the derivation: its copy may be in another
 * partition (docs/design/consumers.md, "Several consumers").
 */
export function partitionKey(record: IngestRecord): string {
  if (record.type === 'revenue') return `${record.project_id}:${record.data.customer_id}`;
  const data = record.data;
  return `${record.project_id}:${data.visitor_fingerprint || data.session_id || ''}`;
}

/** Raised when the log cannot make records durable in time; the gateway answers 503 with Retry-After. */
export class LogUnavailableError extends Error {
  readonly retryable = true;
  /**
   * The log has told of this outage itself (its circuit is open: one line when it opened, one when it
   * closes), so a caller need not log each refusal again.
   */
  readonly reported: boolean;
  constructor(message: string, options?: { cause?: unknown; reported?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LogUnavailableError';
    this.reported = options?.reported ?? false;
  }
}
