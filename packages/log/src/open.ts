// Opens the record log the configuration names: Kafka when KAFKA_BROKERS and SCHEMA_REGISTRY_URL are set,
// the embedded LMDB log under TALLY_DATA_DIR otherwise.
import { resolve } from 'node:path';
import type { TallyConfig } from '@tally/config';
import { openEmbeddedLog } from './embedded/embedded-log.ts';
import type { CircuitChange } from './kafka/circuit-breaker.ts';
import { type Compatibility, openKafkaLog } from './kafka/index.ts';
import type { RecordLog } from './record-log.ts';

export async function openRecordLog(
  config: TallyConfig,
  options: {
    onWarning?: (message: string, error: unknown) => void;
    /** The caller appends: the embedded log takes its writer lock at once (a second writer fails here). */
    writer?: boolean;
    /** The caller only reads (a dashboard's health view): the embedded log runs no retention passes. */
    reader?: boolean;
    /**
     * Kafka: compare the existing topics' settings with the configuration as the log opens, each difference
     * told to onWarning (default true; false where another part of the process does it already).
     */
    checkSettings?: boolean;
    /** Kafka: told once when appends start being refused at once (the brokers unreachable), once when they stop. */
    onCircuitChange?: (change: CircuitChange) => void;
  } = {},
): Promise<RecordLog> {
  if (config.KAFKA_BROKERS && config.SCHEMA_REGISTRY_URL) {
    return openKafkaLog({
      brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()),
      schemaRegistryUrl: config.SCHEMA_REGISTRY_URL.replace(/\/$/, ''),
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      partitions: config.KAFKA_PARTITIONS,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
      compression: config.KAFKA_COMPRESSION,
      lingerMs: config.KAFKA_LINGER_MS,
      retentionMs: config.LOG_RETENTION_HOURS * 3_600_000,
      retentionBytes: config.KAFKA_RETENTION_BYTES,
      // A produce request without an answer for as long as a request may wait opens the circuit.
      openCircuitAfterMs: config.APPEND_TIMEOUT_MS,
      checkTopicSettings: options.checkSettings ?? true,
      ...(options.onCircuitChange && { onCircuitChange: options.onCircuitChange }),
      compatibility: config.SCHEMA_COMPATIBILITY as Compatibility,
      ...(options.onWarning && { onWarning: options.onWarning }),
    });
  }
  if (config.KAFKA_BROKERS || config.SCHEMA_REGISTRY_URL) {
    throw new Error(
      'KAFKA_BROKERS and SCHEMA_REGISTRY_URL go together: set both for Kafka, neither for the embedded log',
    );
  }
  return openEmbeddedLog({
    path: resolve(config.TALLY_DATA_DIR, 'log'),
    ...(!options.reader && { retentionMs: config.LOG_RETENTION_HOURS * 3_600_000 }),
    ...(options.onWarning && { onWarning: options.onWarning }),
    ...(options.writer && { writer: true }),
  });
}
