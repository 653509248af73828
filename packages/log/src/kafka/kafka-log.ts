// The Kafka record log: one topic per record type (`<prefix><type>`), records Avro-encoded in the
// Confluent wire format through a schema registry, keyed so that related records keep their order (see
// partitionKey). The producer is idempotent with acks=all and sends appends in small batches (see
// producer.ts), so a 202 means the brokers in sync have the record; while the brokers cannot be reached,
// appends are refused at once (circuit-breaker.ts). Consumers adapt kafkajs's push model to poll/commit
// (consumer.ts); records they cannot land go to the dead-letter topic (dead-letters.ts). At open it
// compares the existing topics' settings with the configuration (topic-settings.ts).
// Design notes: docs/design/kafka.md.
import { type IngestRecord, RECORD_TYPES, type RecordType } from '@tally/contract';
import kafkajs, { type Admin, type Producer } from 'kafkajs';
import SnappyCodec from 'kafkajs-snappy';
import {
  ALL_TOPICS,
  type BacklogOptions,
  type DeadLetterStore,
  type GroupBacklog,
  type LogConsumer,
  type LogHealth,
  type LogSettingsCheck,
  LogUnavailableError,
  partitionKey,
  type RecordLog,
} from '../record-log.ts';
import { toAvroValue } from './avro.ts';
import { kafkaBacklog } from './backlog.ts';
import { CircuitBreaker, type CircuitChange } from './circuit-breaker.ts';
import { coPartitionedAssigner } from './co-partitioned-assigner.ts';
import { KafkaConsumer } from './consumer.ts';
import { KafkaDeadLetters } from './dead-letters.ts';
import { LingerBatcher } from './producer.ts';
import { type Compatibility, type RegisteredSchemas, registerSchemas } from './registry.ts';
import { checkTopicSettings, mismatchMessage } from './topic-settings.ts';
import { ensureTopics, topicName } from './topics.ts';

// kafkajs is CommonJS and Node's ESM loader does not see all its named exports (CompressionCodecs).
const { CompressionCodecs, CompressionTypes, Kafka, logLevel, PartitionAssigners } = kafkajs;
type Kafka = InstanceType<typeof Kafka>;
CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;

export type KafkaCompression = 'none' | 'gzip' | 'snappy';
const CODECS: Record<KafkaCompression, number> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
};

export interface KafkaLogOptions {
  brokers: string[];
  schemaRegistryUrl: string;
  /** Topics are `<topicPrefix><type>`, e.g. tally.pageview; consumer groups are prefixed the same way. */
  topicPrefix: string;
  /** Partitions and replication factor of the topics this log creates when they are missing. */
  partitions: number;
  replicationFactor: number;
  compression: KafkaCompression;
  /** How long an append waits for others to share its produce request. */
  lingerMs: number;
  /** retention.ms of the topics this log creates (default: the broker's log.retention). */
  retentionMs?: number;
  /** retention.bytes (per partition) of the topics this log creates; -1 unbounded (default: the broker's). */
  retentionBytes?: number;
  /** Compare the existing topics' settings with these at open, each difference told to onWarning (default true). */
  checkTopicSettings?: boolean;
  /** A produce request without an answer for this long opens the circuit (default 5000: APPEND_TIMEOUT_MS). */
  openCircuitAfterMs?: number;
  /** How often the brokers are probed while the circuit is open (default 1000). */
  probeIntervalMs?: number;
  /** Told once when the circuit opens (Kafka unreachable) and once when it closes. */
  onCircuitChange?: (change: CircuitChange) => void;
  /** Compatibility level set on each topic's `-value` subject that has none yet (compatibility.ts). */
  compatibility: Compatibility;
  clientId?: string;
  /** Appends waiting for the brokers beyond this are refused at once (the gateway answers 503). */
  maxPendingRecords?: number;
  /** Told about problems the log recovers from (a commit lost in a rebalance, a failed send). */
  onWarning?: (message: string, error: unknown) => void;
}

/** Connects, creates the missing topics, registers the Avro schemas, and returns the log. */
export async function openKafkaLog(options: KafkaLogOptions): Promise<RecordLog> {
  const kafka = new Kafka({
    clientId: options.clientId ?? 'tally',
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 100, retries: 8 },
  });
  await ensureTopics(kafka, options);
  const schemas = await registerSchemas(options);
  const makeProducer = () =>
    kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1, // with idempotence: no duplicates and per-partition order across retries
      allowAutoTopicCreation: false,
    });
  const first = makeProducer();
  await first.connect();
  const log = new KafkaLog(kafka, renewingProducer(first, makeProducer), schemas, options);
  if (options.checkTopicSettings ?? true) {
    try {
      const { mismatches } = await log.checkSettings();
      for (const mismatch of mismatches) options.onWarning?.(mismatchMessage(mismatch), undefined);
    } catch (error) {
      // The brokers may refuse DescribeConfigs (ACLs): the log works without the comparison.
      options.onWarning?.('the Kafka topics’ settings could not be compared with the configuration', error);
    }
  }
  return log;
}

/**
 * A client of its own for the circuit breaker's probe: no retries and short timeouts, so that a probe of
 * brokers that are away fails in a moment instead of retrying for as long as the producer does.
 */
function probeOf(options: KafkaLogOptions): () => Promise<void> {
  const kafka = new Kafka({
    clientId: `${options.clientId ?? 'tally'}-probe`,
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 2_000,
    retry: { retries: 0 },
  });
  const topics = RECORD_TYPES.map((type) => topicName(options.topicPrefix, type));
  return async () => {
    // Connected for the probe alone (one a second at most, only while the circuit is open).
    const admin = kafka.admin();
    try {
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics });
      // Reachable is not enough: a record goes to a partition's leader, which a restarted broker elects.
      const led = metadata.topics.every(
        (t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0),
      );
      if (!led) throw new Error('partitions without a leader');
    } finally {
      await admin.disconnect().catch(() => {});
    }
  };
}

/**
 * The idempotent producer, replaced by a new one (a new producer id) after any failed send. kafkajs moves a
 * partition's sequence number on only when a send succeeds; when a send that failed had in fact been
 * written (the broker went away before it answered), the next batch would go out with the same sequence
 * number, the broker would answer DUPLICATE_SEQUENCE_NUMBER, and kafkajs would take that for success: a
 * batch acknowledged (202) and never written. A new producer id starts its sequences afresh. (Seen in the
 * broker-outage fault test: one acknowledged record missing, sent seconds after the broker came back.)
 * Calls run one at a time: kafkajs takes a partition's sequence number under its broker lock and gives it
 * back when an attempt fails, so a second send waiting on the lock while a first one's attempt failed
 * after being written would go out with that written sequence (again answered as a duplicate, its records
 * never written), before the first send's failure could mark the producer stale. One send at a time is
 * what `maxInFlightRequests: 1` means for this producer anyway; the linger batcher gathers what arrives
 * meanwhile. (Seen with two gateway event loops, each its own producer: two acknowledged records missing
 * after a broker outage.)
 * Returns the subset of Producer the log uses, each call on the current producer.
 */
export function renewingProducer(first: Producer, make: () => Producer): Producer {
  let current = first;
  let stale = false;
  let renewing: Promise<Producer> | null = null;
  const producer = async (): Promise<Producer> => {
    if (!stale) return current;
    renewing ??= (async () => {
      const next = make();
      await next.connect();
      const old = current;
      current = next;
      stale = false;
      void old.disconnect().catch(() => {});
      return next;
    })().finally(() => {
      renewing = null;
    });
    return renewing;
  };
  let queue: Promise<unknown> = Promise.resolve();
  const run = <T>(call: (p: Producer) => Promise<T>): Promise<T> => {
    const turn = queue.then(async () => {
      const p = await producer();
      try {
        return await call(p);
      } catch (error) {
        if (p === current) stale = true;
        throw error;
      }
    });
    queue = turn.catch(() => {});
    return turn;
  };
  return {
    send: (record) => run((p) => p.send(record)),
    sendBatch: (batch) => run((p) => p.sendBatch(batch)),
    disconnect: async () => {
      await renewing?.catch(() => {});
      await current.disconnect();
    },
  } as Pick<Producer, 'send' | 'sendBatch' | 'disconnect'> as Producer;
}

class KafkaLog implements RecordLog {
  readonly #kafka: Kafka;
  readonly #producer: Producer;
  readonly #schemas: RegisteredSchemas;
  readonly #options: KafkaLogOptions;
  readonly #batcher: LingerBatcher;
  readonly #breaker: CircuitBreaker;
  readonly #consumers = new Set<KafkaConsumer>();
  readonly deadLetters: DeadLetterStore;
  /** Connected at the first backlog() or settings check, kept for the next ones. */
  #admin: Promise<Admin> | null = null;
  #lastSettingsCheck: LogSettingsCheck | null = null;
  #closed = false;

  constructor(kafka: Kafka, producer: Producer, schemas: RegisteredSchemas, options: KafkaLogOptions) {
    this.#kafka = kafka;
    this.#producer = producer;
    this.#schemas = schemas;
    this.#options = options;
    const probe = probeOf(options);
    this.#breaker = new CircuitBreaker({
      openAfterMs: options.openCircuitAfterMs ?? 5_000,
      probeIntervalMs: options.probeIntervalMs ?? 1_000,
      // Closed only once the produce requests of the outage have settled too: kafkajs retries a request for
      // ~25 s, and the producer sends one request at a time (renewingProducer), so a new append would wait
      // behind one of them, past APPEND_TIMEOUT_MS, and open the circuit again.
      probe: async () => {
        if (this.#batcher.inFlight > 0) throw new Error('produce requests of the outage still pending');
        await probe();
      },
      onChange: options.onCircuitChange,
    });
    this.#batcher = new LingerBatcher(
      (topicMessages) =>
        this.#breaker.watch(() =>
          producer.sendBatch({ acks: -1, compression: CODECS[options.compression], topicMessages }),
        ),
      {
        lingerMs: options.lingerMs,
        ...(options.maxPendingRecords !== undefined && { maxPendingRecords: options.maxPendingRecords }),
        // The failure that opens the circuit is told by its one line, the others while it is open not at all.
        onSendFailed: (error) => {
          if (!this.#breaker.accounts(error)) options.onWarning?.('Kafka produce failed', error);
        },
      },
    );
    this.deadLetters = new KafkaDeadLetters(kafka, producer, schemas, options.topicPrefix);
  }

  async append(records: readonly IngestRecord[]): Promise<void> {
    if (this.#closed) throw new LogUnavailableError('record log is closed');
    this.#breaker.check(); // refused at once while Kafka is unreachable
    await this.#batcher.send(
      records.map((record) => ({
        topic: topicName(this.#options.topicPrefix, record.type),
        key: partitionKey(record),
        value: this.#schemas.records[record.type](toAvroValue(record)),
      })),
    );
  }

  consumer(options: { group: string; topics?: readonly RecordType[] }): LogConsumer {
    const consumer = new KafkaConsumer({
      consumer: this.#kafka.consumer({
        groupId: `${this.#options.topicPrefix}${options.group}`,
        allowAutoTopicCreation: false,
        maxWaitTimeInMs: 100,
        // What a fetch hands over is held until it is committed (consumer.ts): a few batches' worth, so
        // that a rebalance waits for little.
        maxBytesPerPartition: 512 * 1024,
        maxBytes: 4 * 1024 * 1024,
        sessionTimeout: 10_000, // a crashed consumer's partitions move on after 10 s
        // A visitor's records are in one partition number of every topic: one member holds them all. Round
        // robin only while members of an older Tally, which know no other, are in the group (an upgrade).
        partitionAssigners: [coPartitionedAssigner, PartitionAssigners.roundRobin],
        heartbeatInterval: 3_000,
      }),
      topics: options.topics ?? ALL_TOPICS,
      topicPrefix: this.#options.topicPrefix,
      registry: this.#schemas.registry,
      onWarning: this.#options.onWarning,
    });
    this.#consumers.add(consumer);
    consumer.onClose(() => this.#consumers.delete(consumer));
    return consumer;
  }

  /** Runs a request of the admin client (connected at the first, kept); a failed one connects anew next time. */
  async #withAdmin<T>(what: string, call: (admin: Admin) => Promise<T>): Promise<T> {
    if (this.#closed) throw new LogUnavailableError('record log is closed');
    this.#admin ??= (async () => {
      const admin = this.#kafka.admin();
      await admin.connect();
      return admin;
    })();
    const admin = this.#admin;
    try {
      return await call(await admin);
    } catch (error) {
      if (this.#admin === admin) this.#admin = null;
      void admin.then((a) => a.disconnect()).catch(() => {});
      throw new LogUnavailableError(`Kafka did not answer ${what}`, { cause: error });
    }
  }

  backlog(options: BacklogOptions = {}): Promise<GroupBacklog[]> {
    return this.#withAdmin('the backlog', (admin) =>
      kafkaBacklog(admin, this.#options.topicPrefix, Date.now, options.oldest ?? true),
    );
  }

  async checkSettings(): Promise<LogSettingsCheck> {
    const check = await this.#withAdmin('the topics’ settings', (admin) =>
      checkTopicSettings(admin, this.#options),
    );
    this.#lastSettingsCheck = check;
    return check;
  }

  lastSettingsCheck(): LogSettingsCheck | null {
    return this.#lastSettingsCheck;
  }

  async health(): Promise<LogHealth> {
    if (this.#closed) return { ok: false, detail: 'closed' };
    // Not ready while the circuit is open; it closes on its own probe, with or without requests coming in
    // (a load balancer sends none to a gateway that is not ready).
    return this.#breaker.health() ?? { ok: true };
  }

  /** Sends what is gathered, waits for every send in flight, then disconnects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#breaker.stop();
    await this.#batcher.close();
    await Promise.all([...this.#consumers].map((c) => c.close()));
    await this.#admin?.then((admin) => admin.disconnect()).catch(() => {});
    await this.#producer.disconnect();
  }
}
