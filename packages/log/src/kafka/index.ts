// The Kafka backend of the record log, one concern per file: topics.ts (administration), registry.ts
// (schemas and encoders), avro.ts (record ↔ Avro value), producer.ts (linger batching), consumer.ts
// (poll/commit over kafkajs), dead-letters.ts, kafka-log.ts (the RecordLog).
export { avroSchemas, deadLetterAvroSchema, fromAvroValue, toAvroValue } from './avro.ts';
export { type KafkaCompression, type KafkaLogOptions, openKafkaLog } from './kafka-log.ts';
export {
  LingerBatcher,
  type LingerBatcherOptions,
  type OutgoingMessage,
  type SendBatch,
} from './producer.ts';
export { deadLetterTopic, topicName } from './topics.ts';
