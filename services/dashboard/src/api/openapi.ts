// The dashboard's API as an OpenAPI 3.1 document (schemas/openapi-dashboard.yaml), generated from the
// operations table and its TypeBox schemas (npm run dashboard:openapi; a test keeps the committed file equal).
import { readFileSync } from 'node:fs';

import { stringify } from 'yaml';
import { BODY_LIMIT_BYTES, OPERATIONS, type Operation } from './operations.ts';
import { COMPONENTS } from './schemas.ts';

export const DASHBOARD_OPENAPI_FILE = new URL('../../../../schemas/openapi-dashboard.yaml', import.meta.url);

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * A TypeBox schema as plain JSON Schema inside the document: a nested schema with an `$id` becomes a
 * reference to its component, TypeBox's `Type.Ref('X')` a reference to component X.
 */
function plain(schema: unknown, root = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => plain(s, false));
  if (typeof schema !== 'object' || schema === null) return schema;
  const node = schema as Record<string, unknown>;
  if (!root && typeof node.$id === 'string') return ref(node.$id);
  if (typeof node.$ref === 'string' && !node.$ref.startsWith('#')) return ref(node.$ref);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$id') continue;
    out[key] = plain(value, false);
  }
  return out;
}

const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('Error') } },
});
const message = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('Message') } },
});

function parameters(op: Operation): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', op.params],
    ['query', op.querystring],
  ] as const) {
    if (!schema) continue;
    const object = plain(schema) as {
      properties: Record<string, Record<string, unknown>>;
      required?: string[];
    };
    for (const [name, property] of Object.entries(object.properties)) {
      const { description, ...rest } = property;
      out.push({
        name,
        in: where,
        required: where === 'path' || (object.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  return out;
}

function responses(op: Operation): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(op.responses)) {
    const description = status.startsWith('2') ? 'OK' : 'See the error body.';
    if (schema === null) {
      out[status] = { description: 'Done; no body.' };
      continue;
    }
    const content: Record<string, unknown> = { 'application/json': { schema: plain(schema) } };
    if (op.csv && status === '200') {
      content['text/csv'] = {
        schema: { type: 'string', description: 'The same figures, a header line first.' },
      };
    }
    out[status] = { description, content };
  }
  if (op.querystring || op.body || op.params) {
    out['400'] ??= message('A parameter or the body does not match the schema (the message names which).');
  }
  if (op.body) {
    out['413'] ??= message(`\`the body is too large\`: over ${BODY_LIMIT_BYTES / 1024} KiB.`);
    out['415'] ??= message('`Content-Type must be application/json`.');
  }
  // Answered before any route runs, by the HTTP server: a path segment longer than Fastify's limit (414)
  // and a request line with headers over Node's 16 KB (431). Documented so that clients expect them.
  out['414'] ??= { description: 'URI Too Long: a path parameter is longer than the server accepts.' };
  out['431'] ??= { description: 'Request Header Fields Too Large: the URL and headers exceed 16 KB.' };
  if (op.access !== 'public') {
    out['401'] ??= error('`Unauthorized`: no valid credentials (none, unknown, revoked or expired).');
  }
  if (
    op.access === 'reader' ||
    op.access === 'revenue' ||
    op.access === 'editor' ||
    op.access === 'operator' ||
    op.access === 'member'
  ) {
    out['403'] ??= error(
      '`Forbidden`: the credentials are of another project' +
        (op.access === 'editor' ? ', or not of a signed-in owner or admin of it' : '') +
        (op.access === 'member' ? ', or not of a signed-in member of it' : '') +
        (op.access === 'revenue' ? '; `Revenue is not shared` on a share link without revenue' : '') +
        (op.access === 'operator' ? '; any share link' : '') +
        (op.method !== 'GET' ? '; `Cross-site request refused` when `Origin` is not the dashboard’s' : '') +
        '.',
    );
  } else if (op.method !== 'GET') {
    out['403'] ??= error('`Cross-site request refused`: `Origin` is not the dashboard’s own.');
  }
  // Refused by the HTTP server or the router before any route runs.
  if (op.params) {
    out['414'] ??= error('`URI Too Long`: a path parameter longer than 100 characters.');
    // A parameter such as `..` or one with `/` makes another path, which no route may match.
    out['404'] ??= message('`Not found`: no route matches the path.');
  }
  out['431'] ??= error('`Request Header Fields Too Large`: the request line and headers exceed 16 KiB.');
  return out;
}

function security(op: Operation): unknown[] {
  switch (op.access) {
    case 'public':
      return [];
    case 'user':
    case 'editor':
      return [{ session: [] }];
    case 'operator':
      return [{ readKey: [] }, { session: [] }];
    default:
      return [{ readKey: [] }, { session: [] }, { shareLink: [] }];
  }
}

/** The OpenAPI 3.1 document of the dashboard's API. */
export function dashboardOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const path = openApiPath(op.url);
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[op.method.toLowerCase()] = {
      operationId: op.operationId,
      tags: [op.tag],
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      security: security(op),
      ...(parameters(op).length ? { parameters: parameters(op) } : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: plain(op.body) } } } }
        : {}),
      responses: responses(op),
    };
  }
  const schemas: Record<string, unknown> = {};
  for (const component of COMPONENTS) schemas[component.$id as string] = plain(component);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tally dashboard API',
      version: VERSION,
      summary: "Read one project's traffic figures (and revenue) as the dashboard shows them.",
      description:
        'Every figure follows docs/traffic.md and docs/revenue.md: visits are computed by Tally from the stored records (no gap of 30 ' +
        'minutes or more), bots are left out, a record delivered twice counts once, counts are exact. Days ' +
        "are in the project's time zone. Errors: `{ message }` for input problems, `{ error }` for " +
        'credentials, rate limits and availability. Every answer is sent with `Cache-Control: no-store`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: 'http://localhost:8082', description: '`npm start` on its defaults (DASHBOARD_PORT)' }],
    tags: [
      'Traffic',
      'Goals and funnels',
      'Annotations and segments',
      'Projects',
      'Sign-in',
      'Share links',
      'Revenue',
      'Health',
      'Alerts',
    ].map((name) => ({
      name,
    })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        readKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'A read key (`read_…`) from `tally tokens create --project <id> --kind read`.',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'tally_session',
          description:
            'The session of a signed-in user (POST /api/v1/session). State-changing requests must come from ' +
            "the dashboard's own origin (`Origin`).",
        },
        shareLink: {
          type: 'http',
          scheme: 'bearer',
          description: 'A share link token (`shr_…`), or the grant (`shg_…`) of a password-protected link.',
        },
      },
    },
  };
}

/** The document as committed in schemas/openapi-dashboard.yaml. */
export function dashboardOpenApiYaml(): string {
  return `# Generated from services/dashboard/src/api (npm run dashboard:openapi); do not edit.\n${stringify(
    dashboardOpenApiDocument(),
    { lineWidth: 0 },
  )}`;
}
