// A kafkajs consumer behind the log's poll/commit interface: each fetched batch is decoded (through the
// schema registry) and queued, and the fetch loop waits, heartbeating, until poll has taken the whole
// queue, so memory holds at most one batch. A message that does not decode is queued as an
// UndecodableMessage: the consumer sets it aside and goes on, instead of failing on it for ever.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { RecordType } from '@tally/contract';
import type { Consumer, EachBatchPayload } from 'kafkajs';
import type { LogConsumer, LogPosition, PolledMessage } from '../record-log.ts';
import { fromAvroValue } from './avro.ts';
import { topicName } from './topics.ts';

export class KafkaConsumer implements LogConsumer {
  readonly #consumer: Consumer;
  readonly #topics: string[];
  readonly #typeOfTopic: Map<string, RecordType>;
  readonly #topicPrefix: string;
  readonly #registry: SchemaRegistry;
  readonly #onWarning: ((message: string, error: unknown) => void) | undefined;
  readonly #queue: PolledMessage[] = [];
  #started: Promise<void> | null = null;
  #watching = false;
  #onQueued: (() => void) | null = null;
  #onDrained: (() => void) | null = null;
  #closeListeners: Array<() => void> = [];
  #closed = false;

  constructor(options: {
    consumer: Consumer;
    topics: readonly RecordType[];
    topicPrefix: string;
    registry: SchemaRegistry;
    onWarning?: ((message: string, error: unknown) => void) | undefined;
  }) {
    this.#consumer = options.consumer;
    this.#topicPrefix = options.topicPrefix;
    this.#topics = options.topics.map((t) => topicName(options.topicPrefix, t));
    this.#typeOfTopic = new Map(options.topics.map((t) => [topicName(options.topicPrefix, t), t]));
    this.#registry = options.registry;
    this.#onWarning = options.onWarning;
  }

  #start(): Promise<void> {
    this.#started ??= (async () => {
      if (!this.#watching) {
        this.#watching = true;
        // kafkajs restarts its consumer only after errors it deems retriable; after any other (an error
        // thrown while the broker was away, for one) it stays stopped, and this consumer would poll an
        // empty queue for ever. The next poll starts it again, from the group's committed offsets.
        this.#consumer.on(this.#consumer.events.CRASH, ({ payload }) => {
          if (payload.restart || this.#closed) return;
          this.#onWarning?.('Kafka consumer stopped on an error; starting it again', payload.error);
          this.#started = null;
          this.#onQueued?.();
        });
      }
      await this.#consumer.connect();
      await this.#consumer.subscribe({ topics: this.#topics, fromBeginning: true });
      await this.#consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: (payload) => this.#takeBatch(payload),
      });
    })().catch((error: unknown) => {
      this.#started = null; // the next poll tries again
      throw error;
    });
    return this.#started;
  }

  async #takeBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const type = this.#typeOfTopic.get(batch.topic);
    if (!type) return;
    for (const message of batch.messages) {
      const position = { topic: type, partition: batch.partition, offset: Number(message.offset) };
      this.#queue.push(await this.#decode(type, position, message.value));
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

  async #decode(type: RecordType, position: LogPosition, value: Buffer | null): Promise<PolledMessage> {
    if (!value)
      return { ...position, record: null, raw: new Uint8Array(), error: 'the message has no value' };
    try {
      const decoded = (await this.#registry.decode(value)) as Record<string, unknown>;
      return { ...position, record: fromAvroValue(type, decoded) };
    } catch (error) {
      // The registry's errors name the schema id or the Avro type, never the value's bytes.
      return {
        ...position,
        record: null,
        raw: new Uint8Array(value),
        error: String((error as Error)?.message ?? error),
      };
    }
  }

  async poll(options: { max?: number; waitMs?: number } = {}): Promise<PolledMessage[]> {
    if (this.#closed) return [];
    try {
      await this.#start();
    } catch (error) {
      // Started again after a crash while the broker is still away: the next poll tries again. Throwing
      // would stop the consumer's process for an outage it outlives.
      this.#onWarning?.('Kafka consumer could not start; trying again', error);
      await new Promise((resolve) => setTimeout(resolve, Math.max(options.waitMs ?? 0, 1000)));
      return [];
    }
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

  async commit(messages: readonly LogPosition[]): Promise<void> {
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
