// What the Kafka record log's topics have against what the configuration says: partitions, replication
// factor and min.insync.replicas (from the topics' metadata and configs), retention.ms and retention.bytes.
// Tally creates a missing topic with the configured settings (topics.ts) and never alters one that exists:
// an operator may have changed it on purpose, and some changes cannot be undone (partitions only grow). So
// a difference is reported instead, and the retention each topic really has is what the health view
// measures a consumer group's oldest record not landed against (Kafka deletes records by age or size
// whether they were read or not).
import { RECORD_TYPES } from '@tally/contract';
import kafkajs, { type Admin } from 'kafkajs';
import type { LogSettingMismatch, LogSettingsCheck, TopicRetention } from '../record-log.ts';
import { deadLetterTopic, minInsyncReplicas, type TopicSettings, topicName } from './topics.ts';

// kafkajs is CommonJS and Node's ESM loader does not see all its named exports.
const { ConfigResourceTypes } = kafkajs;

const CONFIG_NAMES = ['min.insync.replicas', 'retention.ms', 'retention.bytes'];

/** Asks the brokers for the topics' settings and lists each that differs from `settings`. */
export async function checkTopicSettings(
  admin: Admin,
  settings: TopicSettings,
  now: () => number = Date.now,
): Promise<LogSettingsCheck> {
  const records = RECORD_TYPES.map((type) => ({ type, name: topicName(settings.topicPrefix, type) }));
  const deadLetters = deadLetterTopic(settings.topicPrefix);
  const names = [...records.map((r) => r.name), deadLetters];
  const [{ topics }, { resources }] = await Promise.all([
    admin.fetchTopicMetadata({ topics: names }),
    admin.describeConfigs({
      includeSynonyms: false,
      resources: names.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: CONFIG_NAMES })),
    }),
  ]);
  const configOf = (topic: string, name: string): number | null => {
    const value = resources
      .find((r) => r.resourceName === topic)
      ?.configEntries.find((e) => e.configName === name)?.configValue;
    return value === undefined || value === null || value === '' ? null : Number(value);
  };
  const mismatches: LogSettingMismatch[] = [];
  const compare = (
    topic: string,
    setting: LogSettingMismatch['setting'],
    expected: number | undefined,
    actual: number | null,
    configuredBy: string,
  ) => {
    if (expected === undefined || actual === null || actual === expected) return;
    mismatches.push({ topic, setting, expected, actual, configured_by: configuredBy });
  };
  for (const name of names) {
    const partitions = topics.find((t) => t.name === name)?.partitions ?? [];
    const isRecords = name !== deadLetters;
    // The dead letters' topic has one partition, compacted, by design: only its copies are compared.
    if (isRecords) compare(name, 'partitions', settings.partitions, partitions.length, 'KAFKA_PARTITIONS');
    const replicas = partitions.length ? Math.min(...partitions.map((p) => p.replicas.length)) : null;
    compare(name, 'replication.factor', settings.replicationFactor, replicas, 'KAFKA_REPLICATION_FACTOR');
    compare(
      name,
      'min.insync.replicas',
      minInsyncReplicas(settings.replicationFactor),
      configOf(name, 'min.insync.replicas'),
      'KAFKA_REPLICATION_FACTOR',
    );
    if (!isRecords) continue;
    compare(
      name,
      'retention.ms',
      settings.retentionMs,
      configOf(name, 'retention.ms'),
      'LOG_RETENTION_HOURS',
    );
    compare(
      name,
      'retention.bytes',
      settings.retentionBytes,
      configOf(name, 'retention.bytes'),
      'KAFKA_RETENTION_BYTES',
    );
  }
  const bounded = (value: number | null) => (value === null || value < 0 ? null : value);
  const retention: TopicRetention[] = records.map(({ type, name }) => ({
    topic: type,
    retention_ms: bounded(configOf(name, 'retention.ms')),
    retention_bytes: bounded(configOf(name, 'retention.bytes')),
  }));
  return { checked_at: now(), mismatches, retention };
}

/** The log line that reports a difference. */
export function mismatchMessage(m: LogSettingMismatch): string {
  return (
    `Kafka topic ${m.topic}: ${m.setting} is ${m.actual}, the configuration says ${m.expected} ` +
    `(${m.configured_by}); Tally does not change an existing topic: alter the topic or the setting`
  );
}
