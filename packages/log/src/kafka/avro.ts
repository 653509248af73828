// Avro encoding of IngestRecords (schemas/avro/<type>.avsc) and of dead letters (dead-letter.avsc). The
// envelope metadata maps field for field;
// the payload is a nested record whose fields are the contract's payload fields, with the free-form
// objects (event_data, metadata) and the fields the contract does not list (`extra`) as JSON strings,
// so that any reader of the topic (Kafka Connect, ClickHouse's Kafka engine) gets a faithful record.
import { readFileSync } from 'node:fs';
import {
  type IngestRecord,
  PAYLOAD_SCHEMAS,
  RECORD_ENVELOPE_FIELDS,
  RECORD_TYPES,
  type RecordType,
} from '@tally/contract';

export const AVRO_SCHEMA_DIR = new URL('../../../../schemas/avro/', import.meta.url);

export interface AvroSchemaDocument {
  type: 'record';
  name: string;
  namespace: string;
  fields: Array<{ name: string; type: unknown }>;
}

/** The Avro schema of each record type, read from schemas/avro/. */
export function avroSchemas(): Record<RecordType, AvroSchemaDocument> {
  return Object.fromEntries(
    RECORD_TYPES.map((t) => [t, JSON.parse(readFileSync(new URL(`${t}.avsc`, AVRO_SCHEMA_DIR), 'utf8'))]),
  ) as Record<RecordType, AvroSchemaDocument>;
}

/** The Avro schema of the dead-letter topic's values. */
export function deadLetterAvroSchema(): AvroSchemaDocument {
  return JSON.parse(readFileSync(new URL('dead-letter.avsc', AVRO_SCHEMA_DIR), 'utf8'));
}

const ENVELOPE_FIELDS = RECORD_ENVELOPE_FIELDS;

/** Payload fields that hold free-form objects: carried as JSON strings. */
const JSON_FIELDS = new Set(['event_data', 'metadata']);

const contractFields = Object.fromEntries(
  RECORD_TYPES.map((t) => [t, Object.keys(PAYLOAD_SCHEMAS[t].properties)]),
) as Record<RecordType, string[]>;

/** The value avsc encodes for a record. */
export function toAvroValue(record: IngestRecord): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  for (const field of ENVELOPE_FIELDS) value[field] = record[field] ?? null;
  const data = record.data as Record<string, unknown>;
  const payload: Record<string, unknown> = {};
  const known = contractFields[record.type];
  for (const field of known) {
    const v = data[field];
    payload[field] = v === undefined || v === null ? null : JSON_FIELDS.has(field) ? JSON.stringify(v) : v;
  }
  const extra = Object.fromEntries(Object.entries(data).filter(([k]) => !known.includes(k)));
  payload.extra = Object.keys(extra).length ? JSON.stringify(extra) : null;
  value.data = payload;
  return value;
}

/** The IngestRecord back from a decoded Avro value; absent and null optional fields both come back absent. */
export function fromAvroValue(type: RecordType, value: Record<string, unknown>): IngestRecord {
  const record: Record<string, unknown> = { type };
  for (const field of ENVELOPE_FIELDS) record[field] = value[field];
  const payload = value.data as Record<string, unknown>;
  const data: Record<string, unknown> = {};
  for (const field of contractFields[type]) {
    const v = payload[field];
    if (v === null || v === undefined) continue;
    data[field] = JSON_FIELDS.has(field) ? JSON.parse(v as string) : v;
  }
  if (typeof payload.extra === 'string') Object.assign(data, JSON.parse(payload.extra));
  record.data = data;
  return record as unknown as IngestRecord;
}
