// Region and city joined the records' envelope after country (optional, default null): records written
// with the schemas before them must still decode, readers of the schemas before must still read the new
// records, and the schema registry must accept the new schemas over the old ones (BACKWARD, the level the
// log sets on its subjects).
import { randomUUID } from 'node:crypto';
import { RECORD_TYPES } from '@tally/contract';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { testRecord } from '../conformance.ts';
import { type AvroSchemaDocument, avroSchemas, fromAvroValue, toAvroValue } from './avro.ts';

const schemas = avroSchemas();
const ADDED = new Set(['region', 'city']);

/** The schema of a type as it was before region and city. */
const before = (t: (typeof RECORD_TYPES)[number]): AvroSchemaDocument => ({
  ...schemas[t],
  fields: schemas[t].fields.filter((f) => !ADDED.has(f.name)),
});

describe('Avro: region and city, a compatible evolution', () => {
  it.each(RECORD_TYPES)('a %s record written before region and city decodes with them null', (t) => {
    const oldType = avro.Type.forSchema(before(t) as avro.Schema);
    const newType = avro.Type.forSchema(schemas[t] as avro.Schema);
    const old = testRecord(t, { country: t === 'revenue' ? null : 'DE' });
    // Written as a gateway before them wrote it: the old schema has no region nor city to write.
    const bytes = oldType.toBuffer(toAvroValue(old));
    const decoded = fromAvroValue(
      t,
      newType.fromBuffer(bytes, newType.createResolver(oldType)) as Record<string, unknown>,
    );
    expect(decoded).toMatchObject({ id: old.id, region: null, city: null });
  });

  it('a record with its region and city round-trips, and a reader of the old schema still reads it', () => {
    const newType = avro.Type.forSchema(schemas.pageview as avro.Schema);
    const oldType = avro.Type.forSchema(before('pageview') as avro.Schema);
    const record = testRecord('pageview', { country: 'GB', region: 'England', city: 'London' });
    const bytes = newType.toBuffer(toAvroValue(record));
    expect(fromAvroValue('pageview', newType.fromBuffer(bytes) as Record<string, unknown>)).toEqual(record);
    const old = oldType.fromBuffer(bytes, oldType.createResolver(newType)) as Record<string, unknown>;
    expect(old).toMatchObject({ id: record.id, country: 'GB' });
    expect(old).not.toHaveProperty('city');
  });

  it('the schema registry accepts the new schemas over the old ones (BACKWARD)', async () => {
    const registry = process.env.SCHEMA_REGISTRY_URL;
    expect(registry, 'SCHEMA_REGISTRY_URL (test/setup/services.ts)').toBeTruthy();
    const headers = { 'content-type': 'application/vnd.schemaregistry.v1+json' };
    for (const t of RECORD_TYPES) {
      const subject = `test-region-city-${randomUUID().slice(0, 8)}.${t}-value`;
      const config = await fetch(`${registry}/config/${subject}`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ compatibility: 'BACKWARD' }),
      });
      expect(config.status).toBe(200);
      const registered = await fetch(`${registry}/subjects/${subject}/versions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ schema: JSON.stringify(before(t)) }),
      });
      expect(registered.status, await registered.clone().text()).toBe(200);
      const check = await fetch(`${registry}/compatibility/subjects/${subject}/versions/latest`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ schema: JSON.stringify(schemas[t]) }),
      });
      expect(check.status, await check.clone().text()).toBe(200);
      expect(((await check.json()) as { is_compatible: boolean }).is_compatible).toBe(true);
      await fetch(`${registry}/subjects/${subject}`, { method: 'DELETE' });
    }
  });
});
