// The Kafka log's dead-letter store: a compacted topic (`<prefix>dead-letter`, one partition) keyed by
// letter id, each value a DeadLetter in Avro (schemas/avro/dead-letter.avsc) that carries the record's
// message bytes as they were on its topic. Replaying a letter produces those bytes to the topic again and
// writes a tombstone for the letter; discarding writes the tombstone alone. Reading the store reads the
// topic from its start to its end (it is small: only records no consumer could land are in it).
import { randomUUID } from 'node:crypto';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { RECORD_TYPES, type RecordType } from '@tally/contract';
import type { Kafka, Producer } from 'kafkajs';
import {
  byFailedAt,
  type DeadLetter,
  type DeadLetterStore,
  partitionKey,
  type ReplayResult,
} from '../record-log.ts';
import { fromAvroValue, toAvroValue } from './avro.ts';
import type { RegisteredSchemas } from './registry.ts';
import { deadLetterTopic, topicName } from './topics.ts';

interface DeadLetterValue {
  id: string;
  group: string;
  topic: string;
  partition: number;
  offset: number;
  failed_at: number;
  error: string;
  error_code: string;
  value: Buffer | null;
}

export class KafkaDeadLetters implements DeadLetterStore {
  readonly #kafka: Kafka;
  readonly #producer: Producer;
  readonly #schemas: RegisteredSchemas;
  readonly #prefix: string;
  readonly #topic: string;

  constructor(kafka: Kafka, producer: Producer, schemas: RegisteredSchemas, topicPrefix: string) {
    this.#kafka = kafka;
    this.#producer = producer;
    this.#schemas = schemas;
    this.#prefix = topicPrefix;
    this.#topic = deadLetterTopic(topicPrefix);
  }

  async add(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await this.#producer.send({
      topic: this.#topic,
      acks: -1,
      messages: letters.map((letter) => {
        const value: DeadLetterValue = {
          id: letter.id,
          group: letter.group,
          topic: letter.topic,
          partition: letter.partition,
          offset: letter.offset,
          failed_at: letter.failed_at,
          error: letter.error,
          error_code: letter.error_code,
          value: this.#recordBytes(letter),
        };
        return { key: letter.id, value: this.#schemas.deadLetter(value) };
      }),
    });
  }

  async list(): Promise<DeadLetter[]> {
    return [...(await this.#readAll()).values()].sort(byFailedAt);
  }

  async get(id: string): Promise<DeadLetter | null> {
    return (await this.#readAll()).get(id) ?? null;
  }

  async replay(ids: readonly string[]): Promise<ReplayResult> {
    const all = await this.#readAll();
    const result: ReplayResult = { replayed: [], requested: [], refused: [] };
    const byTopic = new Map<string, Array<{ key: string; value: Buffer }>>();
    for (const id of new Set(ids)) {
      const letter = all.get(id);
      if (!letter) result.refused.push({ id, reason: 'no such dead letter' });
      else if (!letter.record) result.refused.push({ id, reason: 'its bytes are not a record' });
      else {
        const topic = topicName(this.#prefix, letter.topic);
        const messages = byTopic.get(topic) ?? [];
        byTopic.set(topic, messages);
        messages.push({ key: partitionKey(letter.record), value: this.#recordBytes(letter) as Buffer });
        result.replayed.push(id);
      }
    }
    if (result.replayed.length === 0) return result;
    await this.#producer.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
    });
    await this.#tombstones(result.replayed);
    return result;
  }

  async discard(ids: readonly string[]): Promise<number> {
    const all = await this.#readAll();
    const present = [...new Set(ids)].filter((id) => all.has(id));
    await this.#tombstones(present);
    return present.length;
  }

  async #tombstones(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#producer.send({
      topic: this.#topic,
      acks: -1,
      messages: ids.map((id) => ({ key: id, value: null })),
    });
  }

  /** The record's message bytes: as they were on the topic, or encoded again from the record. */
  #recordBytes(letter: DeadLetter): Buffer | null {
    if (letter.raw && letter.raw.length > 0) return Buffer.from(letter.raw);
    if (!letter.record) return null;
    return this.#schemas.records[letter.record.type](toAvroValue(letter.record));
  }

  /** Reads the topic from its start to its end; the latest value per key wins, a tombstone removes it. */
  async #readAll(): Promise<Map<string, DeadLetter>> {
    const admin = this.#kafka.admin();
    await admin.connect();
    const groupId = `${this.#prefix}dead-letter-reader-${randomUUID()}`;
    const letters = new Map<string, DeadLetter>();
    try {
      const offsets = await admin.fetchTopicOffsets(this.#topic);
      const ends = new Map(
        offsets.filter((o) => Number(o.high) > Number(o.low)).map((o) => [o.partition, Number(o.high)]),
      );
      if (ends.size === 0) return letters;
      const consumer = this.#kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
      await consumer.connect();
      try {
        await consumer.subscribe({ topic: this.#topic, fromBeginning: true });
        const pending = new Map(ends);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`reading ${this.#topic} did not reach its end in 60 s`)),
            60_000,
          );
          consumer
            .run({
              eachMessage: async ({ partition, message }) => {
                const key = message.key?.toString() ?? '';
                if (message.value) letters.set(key, await this.#decodeLetter(message.value));
                else letters.delete(key);
                const end = pending.get(partition);
                if (end !== undefined && Number(message.offset) + 1 >= end) pending.delete(partition);
                if (pending.size === 0) {
                  clearTimeout(timer);
                  resolve();
                }
              },
            })
            .catch(reject);
        });
      } finally {
        await consumer.disconnect();
      }
    } finally {
      await admin.deleteGroups([groupId]).catch(() => {});
      await admin.disconnect();
    }
    return letters;
  }

  async #decodeLetter(bytes: Buffer): Promise<DeadLetter> {
    const registry: SchemaRegistry = this.#schemas.registry;
    const value = (await registry.decode(bytes)) as DeadLetterValue;
    const topic = value.topic as RecordType;
    let record: DeadLetter['record'] = null;
    if (value.value && RECORD_TYPES.includes(topic)) {
      try {
        record = fromAvroValue(topic, (await registry.decode(value.value)) as Record<string, unknown>);
      } catch {
        record = null; // set aside because it does not decode: it still does not
      }
    }
    return {
      id: value.id,
      group: value.group,
      topic,
      partition: value.partition,
      offset: Number(value.offset),
      failed_at: Number(value.failed_at),
      error: value.error,
      error_code: value.error_code,
      record,
      ...(record === null && { raw: value.value ? new Uint8Array(value.value) : null }),
    };
  }
}
