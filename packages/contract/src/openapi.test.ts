// The committed OpenAPI document is the one the contract generates, and it says what the spec's error
// table says: every status with its body shape, Retry-After on 429 and 503, the token header.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAPI_FILE, openApiDocument, openApiYaml } from './openapi.ts';
import { ENVELOPE_SCHEMAS, RECORD_TYPES } from './schemas.ts';

describe('schemas/openapi.yaml', () => {
  it('matches the contract (run `npx tsx packages/contract/scripts/generate-openapi.ts` after changing it)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(openApiYaml());
    expect(parse(readFileSync(OPENAPI_FILE, 'utf8'))).toEqual(openApiDocument());
  });

  const doc = openApiDocument() as {
    paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  const post = doc.paths['/api/ingest']?.post;

  it('documents every response of the spec with its body and headers', () => {
    const bodyOf = (status: string) =>
      (post?.responses[status]?.content as Record<string, { schema: { $ref: string } }>)['application/json']
        ?.schema.$ref;
    expect(bodyOf('202')).toBe('#/components/schemas/Accepted');
    for (const status of ['400', '413', '415']) expect(bodyOf(status)).toBe('#/components/schemas/Message');
    for (const status of ['401', '403', '429', '503'])
      expect(bodyOf(status)).toBe('#/components/schemas/Error');
    for (const status of ['429', '503'])
      expect(post?.responses[status]?.headers).toHaveProperty('Retry-After');
  });

  it('reuses the contract schemas for each record type', () => {
    for (const type of RECORD_TYPES) {
      const name = `${type[0]?.toUpperCase()}${type.slice(1)}`;
      const envelope = doc.components.schemas[`${name}Envelope`];
      expect(envelope?.properties?.data).toEqual({ $ref: `#/components/schemas/${name}Payload` });
      expect(Object.keys(envelope?.properties ?? {})).toEqual(Object.keys(ENVELOPE_SCHEMAS[type].properties));
    }
    expect(JSON.stringify(doc)).not.toContain('"$id"');
  });
});
