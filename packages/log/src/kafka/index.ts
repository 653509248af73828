// The Kafka backend of the record log, one concern per file: topics.ts (administration), registry.ts
// (schemas and encoders), compatibility.ts (the subjects' compatibility levels), avro.ts (record ↔ Avro
// value), producer.ts (linger batching), consumer.ts (poll/commit over kafkajs), dead-letters.ts,
// kafka-log.ts (the RecordLog).
// kafka-log.ts (and with it kafkajs, the schema registry's client and protobufjs, ~250 modules) is loaded
// only when a Kafka log is opened: a process or gateway thread on the embedded log never pays the memory
// of a client it does not use (each worker thread has its own copy of every module it loads).
import type { RecordLog } from '../record-log.ts';
import type { KafkaLogOptions } from './kafka-log.ts';

export { avroSchemas, deadLetterAvroSchema, fromAvroValue, toAvroValue } from './avro.ts';
export type { CircuitChange } from './circuit-breaker.ts';
export {
  COMPATIBILITY_LEVELS,
  type Compatibility,
  isCompatibility,
  logSubjects,
  setSubjectCompatibility,
  subjectCompatibility,
  valueSubject,
} from './compatibility.ts';
export type { KafkaCompression, KafkaLogOptions } from './kafka-log.ts';
export {
  LingerBatcher,
  type LingerBatcherOptions,
  type OutgoingMessage,
  type SendBatch,
} from './producer.ts';
export { deadLetterTopic, topicName } from './topics.ts';

/** Opens the record log on Kafka (kafka-log.ts, loaded on the first call). */
export async function openKafkaLog(options: KafkaLogOptions): Promise<RecordLog> {
  const { openKafkaLog: open } = await import('./kafka-log.ts');
  return open(options);
}
