// The Kafka record log: one topic per record type (`<prefix><type>`), records Avro-encoded in the
// Confluent wire format (magic byte + schema id) through a schema registry, keyed so that one customer's
// revenue and one visitor's events keep their order. The producer is idempotent with acks=all and sends
// appends in small batches (a linger of a few milliseconds), so a 202 means the brokers in sync have it.
// Consumers adapt kafkajs's push model (eachBatch) to the log's poll/commit interface.
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { IngestRecord, RecordType } from '@tally/contract';
import { RECORD_TYPES } from '@tally/contract';
import kafkajs, { type Admin, type Consumer, type EachBatchPayload, type Producer } from 'kafkajs';
import SnappyCodec from 'kafkajs-snappy';
import {
  ALL_TOPICS,
  type LogConsumer,
  type LogHealth,
  type LogMessage,
  LogUnavailableError,
  partitionKey,
  type RecordLog,
} from '../index.ts';
import { avroSchemas, fromAvroValue, toAvroValue } from './avro.ts';

// kafkajs is CommonJS and Node's ESM loader does not see all its named exports (CompressionCodecs).
const { CompressionCodecs, CompressionTypes, Kafka, logLevel } = kafkajs;
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
  /** Compatibility level set on each topic's `-value` subject. */
  compatibility: keyof typeof COMPATIBILITY;
  clientId?: string;
  /** Appends waiting for the brokers beyond this are refused at once (the gateway answers 503). */
  maxPendingRecords?: number;
  /** Told about problems the log recovers from (a commit lost in a rebalance, a failed send). */
  onWarning?: (message: string, error: unknown) => void;
}

/** A batch this large is sent at once, without waiting for the linger (and stays far below request limits). */
const MAX_BATCH_RECORDS = 1000;

export const topicName = (prefix: string, type: RecordType) => `${prefix}${type}`;

/** Connects, creates the missing topics, registers the Avro schemas, and returns the log. */
export async function openKafkaLog(options: KafkaLogOptions): Promise<RecordLog> {
  const kafka = new Kafka({
    clientId: options.clientId ?? 'tally',
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 100, retries: 8 },
  });
  await ensureTopics(kafka, options);
  const registry = new SchemaRegistry({ host: options.schemaRegistryUrl });
  const schemaIds = await registerSchemas(registry, options);
  const encoders = await avroEncoders(registry, schemaIds);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1, // with idempotence: no duplicates and per-partition order across retries
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  return new KafkaLog(kafka, producer, registry, encoders, options);
}

async function ensureTopics(kafka: Kafka, options: KafkaLogOptions): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = RECORD_TYPES.map((t) => topicName(options.topicPrefix, t)).filter(
      (t) => !existing.has(t),
    );
    if (missing.length) {
      await admin.createTopics({
        // kafkajs's own wait gives up when a broker has not yet heard of a topic its controller just
        // created (KRaft propagates metadata asynchronously); waitForLeaders below retries that case.
        waitForLeaders: false,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: options.partitions,
          replicationFactor: options.replicationFactor,
          configEntries: [
            { name: 'min.insync.replicas', value: String(Math.min(2, options.replicationFactor)) },
            { name: 'compression.type', value: 'producer' },
            ...(options.retentionMs === undefined
              ? []
              : [{ name: 'retention.ms', value: String(options.retentionMs) }]),
          ],
        })),
      });
      await waitForLeaders(admin, missing);
    }
  } finally {
    await admin.disconnect();
  }
}

/** Waits until every partition of `topics` has a leader, for up to `timeoutMs`. */
async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      const ready = metadata.every(
        (t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0),
      );
      if (ready) return;
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (type !== 'UNKNOWN_TOPIC_OR_PARTITION' && type !== 'LEADER_NOT_AVAILABLE') throw error;
      if (Date.now() >= deadline) throw error;
    }
    if (Date.now() >= deadline)
      throw new Error(`Kafka topics ${topics.join(', ')} have no leaders after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function registerSchemas(
  registry: SchemaRegistry,
  options: KafkaLogOptions,
): Promise<Record<RecordType, number>> {
  const schemas = avroSchemas();
  const ids = {} as Record<RecordType, number>;
  for (const type of RECORD_TYPES) {
    const subject = `${topicName(options.topicPrefix, type)}-value`;
    // Set the subject's compatibility level first, so that the registry checks this very registration.
    const config = await fetch(`${options.schemaRegistryUrl}/config/${encodeURIComponent(subject)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: options.compatibility }),
    });
    if (!config.ok)
      throw new Error(`schema registry refused the compatibility of ${subject}: ${config.status}`);
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(schemas[type]) },
      { subject, compatibility: COMPATIBILITY[options.compatibility] },
    );
    ids[type] = id;
  }
  return ids;
}

/** Encodes a record's Avro value in the Confluent wire format: magic byte 0, schema id, Avro body. */
type AvroEncoder = (value: object) => Buffer;

/**
 * One synchronous encoder per record type, from the registered schemas (fetched once, here): the
 * registry client's own encode is async and looks its cache up again for every record, on the hot path.
 * The bytes are the same as `registry.encode` writes.
 */
async function avroEncoders(
  registry: SchemaRegistry,
  schemaIds: Record<RecordType, number>,
): Promise<Record<RecordType, AvroEncoder>> {
  const encoders = {} as Record<RecordType, AvroEncoder>;
  for (const type of RECORD_TYPES) {
    const id = schemaIds[type];
    const schema = await registry.getSchema(id);
    encoders[type] = (value) => {
      const body = schema.toBuffer(value);
      const message = Buffer.allocUnsafe(5 + body.length);
      message[0] = 0;
      message.writeInt32BE(id, 1);
      body.copy(message, 5);
      return message;
    };
  }
  return encoders;
}

interface PendingSend {
  topic: string;
  message: { key: string; value: Buffer };
  resolve(): void;
  reject(error: unknown): void;
}

class KafkaLog implements RecordLog {
  readonly #kafka: Kafka;
  readonly #producer: Producer;
  readonly #registry: SchemaRegistry;
  readonly #encoders: Record<RecordType, AvroEncoder>;
  readonly #options: KafkaLogOptions;
  readonly #typeOfTopic: Map<string, RecordType>;
  readonly #consumers = new Set<KafkaConsumer>();
  #batch: PendingSend[] = [];
  #timer: NodeJS.Timeout | null = null;
  #inFlight = new Set<Promise<void>>();
  #pending = 0;
  #lastSendFailed = false;
  #closed = false;

  constructor(
    kafka: Kafka,
    producer: Producer,
    registry: SchemaRegistry,
    encoders: Record<RecordType, AvroEncoder>,
    options: KafkaLogOptions,
  ) {
    this.#kafka = kafka;
    this.#producer = producer;
    this.#registry = registry;
    this.#encoders = encoders;
    this.#options = options;
    this.#typeOfTopic = new Map(RECORD_TYPES.map((t) => [topicName(options.topicPrefix, t), t]));
  }

  async append(records: readonly IngestRecord[]): Promise<void> {
    if (this.#closed) throw new LogUnavailableError('record log is closed');
    const max = this.#options.maxPendingRecords ?? 10_000;
    if (this.#pending + records.length > max) {
      throw new LogUnavailableError(`more than ${max} records are waiting for Kafka`);
    }
    const encoded = records.map((record) => ({
      topic: topicName(this.#options.topicPrefix, record.type),
      message: {
        key: partitionKey(record),
        value: this.#encoders[record.type](toAvroValue(record)),
      },
    }));
    this.#pending += records.length;
    try {
      await Promise.all(
        encoded.map(
          ({ topic, message }) =>
            new Promise<void>((resolve, reject) => {
              this.#batch.push({ topic, message, resolve, reject });
              if (this.#batch.length >= MAX_BATCH_RECORDS) {
                if (this.#timer) clearTimeout(this.#timer);
                void this.#flush();
              } else {
                this.#timer ??= setTimeout(() => this.#flush(), this.#options.lingerMs);
              }
            }),
        ),
      );
    } finally {
      this.#pending -= records.length;
    }
  }

  /** Sends the batch gathered during the linger in one produce request. */
  #flush(): Promise<void> {
    this.#timer = null;
    const batch = this.#batch;
    this.#batch = [];
    if (batch.length === 0) return Promise.resolve();
    const byTopic = new Map<string, PendingSend['message'][]>();
    for (const send of batch) {
      const messages = byTopic.get(send.topic);
      if (messages) messages.push(send.message);
      else byTopic.set(send.topic, [send.message]);
    }
    const sending = this.#producer
      .sendBatch({
        acks: -1,
        compression: CODECS[this.#options.compression],
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      })
      .then(
        () => {
          this.#lastSendFailed = false;
          for (const send of batch) send.resolve();
        },
        (error: unknown) => {
          this.#lastSendFailed = true;
          this.#options.onWarning?.('Kafka produce failed', error);
          const failure = new LogUnavailableError('Kafka did not acknowledge the records', { cause: error });
          for (const send of batch) send.reject(failure);
        },
      );
    this.#inFlight.add(sending);
    sending.finally(() => this.#inFlight.delete(sending));
    return sending;
  }

  consumer(options: { group: string; topics?: readonly RecordType[] }): LogConsumer {
    const consumer = new KafkaConsumer(
      this.#kafka.consumer({
        groupId: `${this.#options.topicPrefix}${options.group}`,
        allowAutoTopicCreation: false,
        maxWaitTimeInMs: 100,
        sessionTimeout: 10_000, // a crashed consumer's partitions move on after 10 s
        heartbeatInterval: 3_000,
      }),
      (options.topics ?? ALL_TOPICS).map((t) => topicName(this.#options.topicPrefix, t)),
      this.#typeOfTopic,
      this.#options.topicPrefix,
      this.#registry,
      this.#options.onWarning,
    );
    this.#consumers.add(consumer);
    consumer.onClose(() => this.#consumers.delete(consumer));
    return consumer;
  }

  async health(): Promise<LogHealth> {
    if (this.#closed) return { ok: false, detail: 'closed' };
    if (this.#lastSendFailed) return { ok: false, detail: 'the last produce request failed' };
    return { ok: true };
  }

  /** Sends what is gathered, waits for every send in flight, then disconnects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#flush();
    await Promise.allSettled([...this.#inFlight]);
    await Promise.all([...this.#consumers].map((c) => c.close()));
    await this.#producer.disconnect();
  }
}

/**
 * A kafkajs consumer behind poll/commit: each fetched batch is decoded and queued, and the fetch loop
 * waits (heartbeating) until poll has taken the whole queue, so memory holds at most one batch.
 */
class KafkaConsumer implements LogConsumer {
  readonly #consumer: Consumer;
  readonly #topics: string[];
  readonly #typeOfTopic: Map<string, RecordType>;
  readonly #topicPrefix: string;
  readonly #registry: SchemaRegistry;
  readonly #onWarning: KafkaLogOptions['onWarning'];
  readonly #queue: LogMessage[] = [];
  #started: Promise<void> | null = null;
  #onQueued: (() => void) | null = null;
  #onDrained: (() => void) | null = null;
  #closeListeners: Array<() => void> = [];
  #closed = false;

  constructor(
    consumer: Consumer,
    topics: string[],
    typeOfTopic: Map<string, RecordType>,
    topicPrefix: string,
    registry: SchemaRegistry,
    onWarning: KafkaLogOptions['onWarning'],
  ) {
    this.#consumer = consumer;
    this.#topics = topics;
    this.#typeOfTopic = typeOfTopic;
    this.#topicPrefix = topicPrefix;
    this.#registry = registry;
    this.#onWarning = onWarning;
  }

  #start(): Promise<void> {
    this.#started ??= (async () => {
      await this.#consumer.connect();
      await this.#consumer.subscribe({ topics: this.#topics, fromBeginning: true });
      await this.#consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: (payload) => this.#takeBatch(payload),
      });
    })();
    return this.#started;
  }

  async #takeBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const type = this.#typeOfTopic.get(batch.topic);
    if (!type) return;
    for (const message of batch.messages) {
      if (!message.value) continue;
      const value = (await this.#registry.decode(message.value)) as Record<string, unknown>;
      this.#queue.push({
        topic: type,
        partition: batch.partition,
        offset: Number(message.offset),
        record: fromAvroValue(type, value),
      });
      resolveOffset(message.offset); // the fetch position moves on; the group's commit is commit()'s
    }
    this.#onQueued?.();
    while (this.#queue.length > 0 && isRunning() && !isStale() && !this.#closed) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        this.#onDrained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#onDrained = null;
      await heartbeat();
    }
  }

  async poll(options: { max?: number; waitMs?: number } = {}): Promise<LogMessage[]> {
    if (this.#closed) return [];
    await this.#start();
    if (this.#queue.length === 0 && (options.waitMs ?? 0) > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.waitMs);
        this.#onQueued = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#onQueued = null;
    }
    const taken = this.#queue.splice(0, options.max ?? 500);
    if (this.#queue.length === 0) this.#onDrained?.();
    return taken;
  }

  async commit(messages: readonly LogMessage[]): Promise<void> {
    const next = new Map<string, { topic: string; partition: number; offset: number }>();
    for (const m of messages) {
      const topic = topicName(this.#topicPrefix, m.topic);
      const key = `${topic}:${m.partition}`;
      if ((next.get(key)?.offset ?? -1) < m.offset + 1)
        next.set(key, { topic, partition: m.partition, offset: m.offset + 1 });
    }
    if (next.size === 0) return;
    try {
      await this.#consumer.commitOffsets([...next.values()].map((o) => ({ ...o, offset: String(o.offset) })));
    } catch (error) {
      // A rebalance took the partitions away: another member gets the records again, and consumers
      // deduplicate by record id, so a lost commit costs a redelivery, never a loss.
      this.#onWarning?.('Kafka offset commit failed; the records will be delivered again', error);
    }
  }

  onClose(listener: () => void): void {
    this.#closeListeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onDrained?.();
    this.#onQueued?.();
    if (this.#started) await this.#started.catch(() => {});
    await this.#consumer.disconnect();
    for (const listener of this.#closeListeners) listener();
  }
}
