// The schema registry's part of the Kafka record log: each topic's Avro schema registered under
// `<topic>-value`, checked by the registry against the subject's compatibility level (the operator's when
// the subject has one; SCHEMA_COMPATIBILITY, set first, when it has none: compatibility.ts), and
// synchronous encoders in the Confluent wire format (magic byte 0, schema id, Avro body) built once from
// the registered schemas.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { RECORD_TYPES, type RecordType } from '@tally/contract';
import { type AvroSchemaDocument, avroSchemas, deadLetterAvroSchema } from './avro.ts';
import { answerOf, type Compatibility, ensureSubjectCompatibility, valueSubject } from './compatibility.ts';
import { deadLetterTopic, topicName } from './topics.ts';

export type { Compatibility } from './compatibility.ts';

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
    const subject = valueSubject(topic);
    // A subject's level is left as it is; one without a level gets SCHEMA_COMPATIBILITY first, so that
    // the registry checks this very registration against it.
    const { level } = await ensureSubjectCompatibility(
      options.schemaRegistryUrl,
      subject,
      options.compatibility,
    );
    // Registered through the REST API itself: the registry client's register() refuses a subject whose
    // level differs from the one it is given (and would set it), where the registry's own check is wanted.
    const response = await fetch(
      `${options.schemaRegistryUrl}/subjects/${encodeURIComponent(subject)}/versions`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/vnd.schemaregistry.v1+json',
          accept: 'application/vnd.schemaregistry.v1+json',
        },
        body: JSON.stringify({ schema: JSON.stringify(schema) }),
      },
    );
    if (!response.ok) {
      const answer = await answerOf(response);
      throw new Error(
        response.status === 409
          ? `the schema registry refused the schema of ${subject}: it is not ${level}-compatible with the ` +
              `versions registered under it (${answer}); see tally kafka compatibility`
          : `the schema registry refused the schema of ${subject}: ${answer}`,
      );
    }
    const { id } = (await response.json()) as { id: number };
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
