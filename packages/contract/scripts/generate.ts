// Writes schemas/json/*.schema.json from the contract.
import { writeFileSync } from 'node:fs';
import { JSON_SCHEMA_DIR, jsonSchemaFiles } from '../src/json-schema-files.ts';

for (const [name, text] of jsonSchemaFiles()) {
  writeFileSync(new URL(name, JSON_SCHEMA_DIR), text);
  console.log(`wrote schemas/json/${name}`);
}
