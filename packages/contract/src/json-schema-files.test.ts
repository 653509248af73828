import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { JSON_SCHEMA_DIR, jsonSchemaFiles } from './json-schema-files.ts';

it('schemas/json/ matches the contract (run `npm run contract:generate` after changing it)', () => {
  for (const [name, text] of jsonSchemaFiles()) {
    expect(readFileSync(new URL(name, JSON_SCHEMA_DIR), 'utf8'), name).toBe(text);
  }
});
