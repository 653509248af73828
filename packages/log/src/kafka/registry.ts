// The schema registry's part of the Kafka record log: each topic's Avro schema registered under
// `<topic>-value` with the configured compatibility level, and synchronous encoders in the Confluent wire
// format (magic byte 0, schema id, Avro body) built once from the registered schemas.
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { RECORD_TYPES, type RecordType } from '@tally/contract';
import { type AvroSchemaDocument, avroSchemas, deadLetterAvroSchema } from './avro.ts';
import { deadLetterTopic, topicName } from './topics.ts';

export type Compatibility = keyof typeof COMPATIBILITY;

/** Encodes an Avro value in the Confluent wire format. */
export type AvroEncoder = (value: object) => Buffer;

export interface RegisteredSchemas {
  registry: SchemaRegistry;
  /** One encoder per record type. */
  records: Record<RecordType, AvroEncoder>;
  deadLetter: AvroEncoder;
}

/** Registers every schema of the log (the record types and the dead letters) and builds their encoders. */
export async function registerSchemas(options: {
  schemaRegistryUrl: string;
  topicPrefix: string;
  compatibility: Compatibility;
}): Promise<RegisteredSchemas> {
  const registry = new SchemaRegistry({ host: options.schemaRegistryUrl });
  const register = async (topic: string, schema: AvroSchemaDocument): Promise<AvroEncoder> => {
    const subject = `${topic}-value`;
    // Set the subject's compatibility level first, so that the registry checks this very registration.
    const config = await fetch(`${options.schemaRegistryUrl}/config/${encodeURIComponent(subject)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: options.compatibility }),
    });
    if (!config.ok)
      throw new Error(`schema registry refused the compatibility of ${subject}: ${config.status}`);
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
      { subject, compatibility: COMPATIBILITY[options.compatibility] },
    );
    return encoderFor(registry, id);
  };
  const schemas = avroSchemas();
  const records = {} as Record<RecordType, AvroEncoder>;
  for (const type of RECORD_TYPES) {
    records[type] = await register(topicName(options.topicPrefix, type), schemas[type]);
  }
  const deadLetter = await register(deadLetterTopic(options.topicPrefix), deadLetterAvroSchema());
  return { registry, records, deadLetter };
}

/**
 * A synchronous encoder for a registered schema (fetched once, here): the registry client's own encode is
 * async and looks its cache up again for every record, on the hot path. The bytes are the same as
 * `registry.encode` writes.
 */
async function encoderFor(registry: SchemaRegistry, id: number): Promise<AvroEncoder> {
  const schema = await registry.getSchema(id);
  return (value) => {
    const body = schema.toBuffer(value);
    const message = Buffer.allocUnsafe(5 + body.length);
    message[0] = 0;
    message.writeInt32BE(id, 1);
    body.copy(message, 5);
    return message;
  };
}
