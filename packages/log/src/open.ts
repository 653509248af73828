// Opens the record log the configuration chose (config.backends.log, decided as it loaded): Kafka when
// KAFKA_BROKERS and SCHEMA_REGISTRY_URL are set, the embedded LMDB log under the data directory otherwise.
import { join } from 'node:path';
import type { TallyConfig } from '@tally/config';
import { type EnvironmentSharer, openEmbeddedLog } from './embedded/embedded-log.ts';
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
     * The embedded log's writer reopens its environment every LOG_REOPEN_BYTES appended, so that the log's
     * pages do not stay resident as it grows (the gateway; npm start's writer, whichever thread holds it).
     */
    releasePages?: boolean;
    /**
     * The process's other handle on the embedded log, closed while this writer reopens its own (npm start
     * with one gateway loop: the main thread's, through thread/release-port.ts).
     */
    sharer?: EnvironmentSharer;
    /**
     * Kafka: compare the existing topics' settings with the configuration as the log opens, each difference
     * told to onWarning (default true; false where another part of the process does it already).
     */
    checkSettings?: boolean;
    /** Kafka: told once when appends start being refused at once (the brokers unreachable), once when they stop. */
    onCircuitChange?: (change: CircuitChange) => void;
  } = {},
): Promise<RecordLog> {
  const backend = config.backends.log;
  if (backend.kind === 'kafka') {
    return openKafkaLog({
      brokers: backend.brokers,
      schemaRegistryUrl: backend.schemaRegistryUrl,
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
  return openEmbeddedLog({
    path: embeddedLogDir(config.dataDir),
    ...(!options.reader && { retentionMs: config.LOG_RETENTION_HOURS * 3_600_000 }),
    ...(options.releasePages &&
      config.LOG_REOPEN_BYTES > 0 && { releasePagesEveryBytes: config.LOG_REOPEN_BYTES }),
    ...(options.sharer && { sharer: options.sharer }),
    ...(options.onWarning && { onWarning: options.onWarning }),
    ...(options.writer && { writer: true }),
  });
}

/** Where the embedded record log keeps its files: `log` in the data directory. */
export function embeddedLogDir(dataDir: string): string {
  return join(dataDir, 'log');
}
