// Topic administration of the Kafka record log: one topic per record type (`<prefix><type>`) and the
// compacted dead-letter topic, created at start-up when missing, with the settings Tally relies on. A topic
// that exists is never changed (its settings are the operator's): topic-settings.ts compares them.
import { RECORD_TYPES, type RecordType } from '@tally/contract';
import type { Admin, Kafka } from 'kafkajs';

export const topicName = (prefix: string, type: RecordType) => `${prefix}${type}`;
export const deadLetterTopic = (prefix: string) => `${prefix}dead-letter`;

export interface TopicSettings {
  topicPrefix: string;
  partitions: number;
  replicationFactor: number;
  /** retention.ms of the record topics (default: the broker's log.retention). */
  retentionMs?: number | undefined;
  /** retention.bytes of the record topics, per partition; -1 unbounded (default: the broker's). */
  retentionBytes?: number | undefined;
}

/** min.insync.replicas of the topics Tally creates: two copies acknowledged where there are two. */
export const minInsyncReplicas = (replicationFactor: number) => Math.min(2, replicationFactor);

/** Creates the record topics and the dead-letter topic that do not exist yet, and waits for their leaders. */
export async function ensureTopics(kafka: Kafka, settings: TopicSettings): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const minInsync = {
      name: 'min.insync.replicas',
      value: String(minInsyncReplicas(settings.replicationFactor)),
    };
    const wanted = [
      ...RECORD_TYPES.map((t) => ({
        topic: topicName(settings.topicPrefix, t),
        numPartitions: settings.partitions,
        replicationFactor: settings.replicationFactor,
        configEntries: [
          minInsync,
          { name: 'compression.type', value: 'producer' },
          ...(settings.retentionMs === undefined
            ? []
            : [{ name: 'retention.ms', value: String(settings.retentionMs) }]),
          ...(settings.retentionBytes === undefined
            ? []
            : [{ name: 'retention.bytes', value: String(settings.retentionBytes) }]),
        ],
      })),
      {
        // Few letters, read whole by `tally dead-letters`: one partition, compacted so that a replayed or
        // discarded letter (a tombstone) goes away, never deleted by age.
        topic: deadLetterTopic(settings.topicPrefix),
        numPartitions: 1,
        replicationFactor: settings.replicationFactor,
        configEntries: [minInsync, { name: 'cleanup.policy', value: 'compact' }],
      },
    ];
    const missing = wanted.filter((t) => !existing.has(t.topic));
    if (missing.length) {
      await admin.createTopics({
        // kafkajs's own wait gives up when a broker has not yet heard of a topic its controller just
        // created (KRaft propagates metadata asynchronously); waitForLeaders below retries that case.
        waitForLeaders: false,
        topics: missing,
      });
      await waitForLeaders(
        admin,
        missing.map((t) => t.topic),
      );
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
