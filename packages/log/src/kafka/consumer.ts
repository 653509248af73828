// A kafkajs consumer behind the log's poll/commit interface: each fetched batch is decoded (through the
// schema registry) and queued, and kafkajs's call for it (eachBatch) is held, heartbeating, until the batch
// is committed. So memory holds one fetch, and, above all, this member keeps its partitions while it lands
// what it took from them: kafkajs rejoins the group (and may lose partitions) only once every batch it
// handed over is committed. When the group rebalances meanwhile, the batch in hand is finished and
// committed first (Kafka accepts the commit while the group waits for its members); only when the group
// removed this member (it stayed away longer than the rebalance timeout: landing blocked by a warehouse
// outage) are the records in hand abandoned: assertHeld throws OwnershipLostError for them, they are never
// committed, and the new holder gets them again. A message that does not decode is queued as an
// UndecodableMessage: the consumer sets it aside and goes on, instead of failing on it for ever.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { RecordType } from '@tally/contract';
import type { Consumer, EachBatchPayload } from 'kafkajs';
import { type LogConsumer, type LogPosition, OwnershipLostError, type PolledMessage } from '../record-log.ts';
import { fromAvroValue } from './avro.ts';
import { topicName } from './topics.ts';

/** A batch kafkajs handed over, whose eachBatch call waits until it is committed (or given up). */
interface HeldBatch {
  topic: string;
  partition: number;
  firstOffset: number;
  lastOffset: number;
  release(): void;
}

const tp = (topic: string, partition: number) => `${topic}:${partition}`;

/** Heartbeat errors that mean the group is rebalancing: this member still holds its partitions. */
const REBALANCING = new Set(['REBALANCE_IN_PROGRESS']);

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
  readonly #held = new Set<HeldBatch>();
  /** Per topic and partition: the last offset poll handed over, and the next offset committed. */
  readonly #taken = new Map<string, number>();
  readonly #committed = new Map<string, number>();
  /** Bumped when the partitions in hand are lost: messages polled before belong to an older holding. */
  #holding = 0;
  readonly #holdingOf = new WeakMap<PolledMessage, number>();
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
        // A new assignment: what another member wrote for these partitions meanwhile is not in memory here.
        this.#consumer.on(this.#consumer.events.GROUP_JOIN, () => {
          this.#holding++;
          this.#taken.clear();
          this.#committed.clear();
        });
        this.#consumer.on(this.#consumer.events.CRASH, ({ payload }) => {
          // Whether kafkajs restarts it or this consumer does, it starts again from the committed offsets:
          // the records in hand are another holding's.
          this.#lose();
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
        // Every partition's batch of a fetch is taken at once, so that one landing carries them all.
        partitionsConsumedConcurrently: 64,
        eachBatch: (payload) => this.#takeBatch(payload),
      });
    })().catch((error: unknown) => {
      this.#started = null; // the next poll tries again
      throw error;
    });
    return this.#started;
  }

  async #takeBatch({ batch, resolveOffset, heartbeat, isRunning }: EachBatchPayload): Promise<void> {
    const type = this.#typeOfTopic.get(batch.topic);
    if (!type || batch.messages.length === 0) return;
    const holding = this.#holding;
    for (const message of batch.messages) {
      const position = { topic: type, partition: batch.partition, offset: Number(message.offset) };
      const polled = await this.#decode(type, position, message.value);
      this.#holdingOf.set(polled, holding);
      this.#queue.push(polled);
      resolveOffset(message.offset); // the fetch position moves on; the group's commit is commit()'s
    }
    if (holding !== this.#holding) return; // lost while decoding: kafkajs rejoins and fetches again
    let released = false;
    let wake = () => {};
    const held: HeldBatch = {
      topic: batch.topic,
      partition: batch.partition,
      firstOffset: Number(batch.messages[0]?.offset),
      lastOffset: Number(batch.messages.at(-1)?.offset),
      release: () => {
        released = true;
        this.#held.delete(held);
        wake();
      },
    };
    this.#held.add(held);
    this.#onQueued?.();
    while (!released && isRunning() && !this.#closed) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (released) break;
      try {
        await heartbeat();
      } catch (error) {
        // The group waits for this member to rejoin: what the consumer took is finished and committed
        // first; what it did not take yet is left (fetched again from the committed offsets, by whichever
        // member gets its partition), so that the group waits for one landing at most.
        if (REBALANCING.has((error as { type?: string }).type ?? '')) {
          this.#leaveUntaken();
          continue;
        }
        // Removed from the group (or the coordinator is gone): what is in hand is no longer ours.
        this.#lose();
        throw error;
      }
    }
    held.release();
  }

  /** Drops the queued records poll has not taken, and lets go of the batches only those were waiting for. */
  #leaveUntaken(): void {
    this.#queue.length = 0;
    for (const held of [...this.#held]) {
      const key = tp(held.topic, held.partition);
      const taken = this.#taken.get(key) ?? -1;
      if (taken < held.firstOffset || (this.#committed.get(key) ?? -1) > taken) held.release();
      else held.lastOffset = Math.min(held.lastOffset, taken);
    }
  }

  /** Gives up the records in hand: they are another holding's now, and delivered again to their holder. */
  #lose(): void {
    this.#holding++;
    this.#queue.length = 0;
    this.#taken.clear();
    for (const held of [...this.#held]) held.release();
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
    // With batches held for their commit and none queued, nothing more comes until they are committed.
    if (this.#queue.length === 0 && this.#held.size === 0 && (options.waitMs ?? 0) > 0) {
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
    for (const message of taken) {
      const key = tp(topicName(this.#topicPrefix, message.topic), message.partition);
      this.#taken.set(key, Math.max(message.offset, this.#taken.get(key) ?? -1));
    }
    return taken;
  }

  holding(): number {
    return this.#holding;
  }

  assertHeld(messages: readonly LogPosition[]): void {
    for (const message of messages) {
      const holding = this.#holdingOf.get(message as PolledMessage);
      if (holding !== undefined && holding !== this.#holding) throw new OwnershipLostError();
    }
  }

  async commit(messages: readonly LogPosition[]): Promise<void> {
    this.assertHeld(messages);
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
      // The group no longer counts this member (or its generation): another member gets the records
      // again, and consumers deduplicate by record id, so a lost commit costs a redelivery, never a loss.
      this.#onWarning?.('Kafka offset commit failed; the records will be delivered again', error);
      this.#lose();
      throw new OwnershipLostError('the group refused the commit: the records go to their new holder');
    }
    for (const { topic, partition, offset } of next.values())
      this.#committed.set(tp(topic, partition), offset);
    for (const held of [...this.#held]) {
      const committed = next.get(tp(held.topic, held.partition));
      if (committed && committed.offset > held.lastOffset) held.release();
    }
  }

  onClose(listener: () => void): void {
    this.#closeListeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const held of [...this.#held]) held.release();
    this.#onQueued?.();
    if (this.#started) await this.#started.catch(() => {});
    await this.#consumer.disconnect();
    for (const listener of this.#closeListeners) listener();
  }
}
