// @tally/log: the record log. The interface is record-log.ts; one folder per backend (embedded/: LMDB;
// kafka/: Avro on per-type topics); cross-cutting behaviour wraps a backend (append-timeout.ts).
export * from './append-timeout.ts';
export {
  type EmbeddedLogConsumer,
  type EmbeddedLogOptions,
  type EmbeddedRecordLog,
  type EnvironmentSharer,
  type GroupPosition,
  openEmbeddedLog,
} from './embedded/embedded-log.ts';
export { EmbeddedLogLockedError } from './embedded/writer-lock.ts';
export {
  avroSchemas,
  type CircuitChange,
  COMPATIBILITY_LEVELS,
  type Compatibility,
  deadLetterTopic,
  fromAvroValue,
  isCompatibility,
  type KafkaLogOptions,
  logSubjects,
  openKafkaLog,
  setSubjectCompatibility,
  subjectCompatibility,
  toAvroValue,
  topicName,
  valueSubject,
} from './kafka/index.ts';
export { embeddedLogDir, openRecordLog } from './open.ts';
export * from './record-log.ts';
export { appendThroughPort, serveAppends } from './thread/append-port.ts';
export { type SuspendableLog, serveEnvironmentRelease, suspendThroughPort } from './thread/release-port.ts';
