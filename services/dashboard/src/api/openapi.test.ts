import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DASHBOARD_OPENAPI_FILE, dashboardOpenApiDocument, dashboardOpenApiYaml } from './openapi.ts';
import { OPERATIONS } from './operations.ts';

describe('schemas/openapi-dashboard.yaml', () => {
  it('is generated from the operations table (run `npm run dashboard:openapi` after changing it)', () => {
    expect(readFileSync(DASHBOARD_OPENAPI_FILE, 'utf8')).toBe(dashboardOpenApiYaml());
  });

  it('documents every operation, and every reference resolves to a component', () => {
    const doc = dashboardOpenApiDocument() as {
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    const ids = Object.values(doc.paths).flatMap((methods) =>
      Object.values(methods).map((o) => o.operationId),
    );
    expect(ids.sort()).toEqual(OPERATIONS.map((o) => o.operationId).sort());
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map(
      (m) => m[1],
    );
    for (const name of new Set(refs)) expect(doc.components.schemas, name).toHaveProperty(name as string);
    expect(parse(dashboardOpenApiYaml())).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});
