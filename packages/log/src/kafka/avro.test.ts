import { PAYLOAD_SCHEMAS, RECORD_ENVELOPE_FIELDS, RECORD_TYPES } from '@tally/contract';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { testRecord } from '../conformance.ts';
import { avroSchemas, fromAvroValue, toAvroValue } from './avro.ts';

const schemas = avroSchemas();
const payloadFields = (t: (typeof RECORD_TYPES)[number]) => {
  const data = schemas[t].fields.find((f) => f.name === 'data')?.type as { fields: Array<{ name: string }> };
  return data.fields.map((f) => f.name);
};

describe('Avro schemas', () => {
  it.each(RECORD_TYPES)('carry exactly the envelope fields of the contract for %s, in order', (t) => {
    const envelope = schemas[t].fields.map((f) => f.name).filter((f) => f !== 'data');
    expect(envelope).toEqual([...RECORD_ENVELOPE_FIELDS]);
  });

  it.each(RECORD_TYPES)('list exactly the contract fields of %s (plus extra), so neither can drift', (t) => {
    expect(
      payloadFields(t)
        .filter((f) => f !== 'extra')
        .sort(),
    ).toEqual(Object.keys(PAYLOAD_SCHEMAS[t].properties).sort());
  });

  it.each(RECORD_TYPES)('mark as required exactly the fields the contract requires for %s', (t) => {
    const data = schemas[t].fields.find((f) => f.name === 'data')?.type as {
      fields: Array<{ name: string; type: unknown }>;
    };
    const requiredInAvro = data.fields.filter((f) => !Array.isArray(f.type)).map((f) => f.name);
    const required = [...(PAYLOAD_SCHEMAS[t].required ?? [])];
    // currency has a default in the contract, so it is always present once validated
    expect(requiredInAvro.sort()).toEqual([...required, ...(t === 'revenue' ? ['currency'] : [])].sort());
  });

  it.each(RECORD_TYPES)('round-trip a %s record field for field', (t) => {
    const type = avro.Type.forSchema(schemas[t] as avro.Schema);
    const record = testRecord(t, { client_timestamp: 1_767_225_600_000 });
    (record.data as Record<string, unknown>).utm_term = 'shoes'; // a field the contract does not list
    (record.data as Record<string, unknown>).timestamp = 1_767_225_600_000.5;
    const decoded = fromAvroValue(
      t,
      type.fromBuffer(type.toBuffer(toAvroValue(record))) as Record<string, unknown>,
    );
    expect(decoded).toEqual(record);
  });
});
