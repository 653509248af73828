// The contract rendered as standalone JSON Schema documents (schemas/json/*.schema.json), for tools and
// clients outside TypeScript. The files are generated (npm run contract:generate) and a test keeps them in sync.
import { ENVELOPE_SCHEMAS, RECORD_TYPES } from './schemas.ts';

export const JSON_SCHEMA_DIR = new URL('../../../schemas/json/', import.meta.url);

export function jsonSchemaFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const type of RECORD_TYPES) {
    const document = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: `POST /api/ingest body with type "${type}"`,
      ...ENVELOPE_SCHEMAS[type],
    };
    files.set(`${type}.schema.json`, `${JSON.stringify(document, null, 2)}\n`);
  }
  return files;
}
