// ClickHouse's HTTP protocol, read off a request: who asks (Basic auth, X-ClickHouse-User/-Key headers, or
// user/password parameters), the query (the `query` parameter, the body, or both joined by a line break;
// or the fields of a multipart/form-data body, as clickhouse-connect sends long parameters), the current
// database (`database`, X-ClickHouse-Database), the default format (`default_format`,
// X-ClickHouse-Format), the session (`session_id`, `session_timeout`, `session_check`), compression
// switches, query parameters (`param_<name>`) and every other parameter as a setting for this query.
import type { IncomingMessage } from 'node:http';
import { HttpInterfaceError } from './errors.ts';

/** URL parameters that belong to the protocol, not to the engine's settings. */
const PROTOCOL_PARAMS = new Set([
  'query',
  'query_id',
  'database',
  'default_format',
  'session_id',
  'session_timeout',
  'session_check',
  'user',
  'password',
  'quota_key',
  'compress',
  'decompress',
  'buffer_size',
  'wait_end_of_query',
  'role',
  'stacktrace',
  'client_protocol_version',
  'close_session',
]);

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ClickHouseRequest {
  method: string;
  user: string;
  password: string;
  queryId: string | null;
  /** The query text from the URL (or form), before the body. */
  queryParam: string | null;
  database: string | null;
  defaultFormat: string | null;
  sessionId: string | null;
  sessionTimeout: number | null;
  sessionCheck: boolean;
  /** `compress=1`: answer in ClickHouse's compressed blocks. */
  compress: boolean;
  /** `decompress=1`: the body is in ClickHouse's compressed blocks. */
  decompress: boolean;
  waitEndOfQuery: boolean;
  roles: string[];
  /** Settings for this query, in the order given. */
  settings: [string, string][];
  /** Query parameters ({name:Type}), by name without the `param_` prefix, in ClickHouse's escaped form. */
  params: [string, string][];
}

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const truthy = (value: string | null | undefined) => value === '1' || value === 'true';

function credentials(request: IncomingMessage, url: URL): { user: string; password: string } {
  const basic = /^Basic\s+(\S+)\s*$/i.exec(header(request, 'authorization') ?? '');
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return { user: decoded, password: '' };
    return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return {
    user: url.searchParams.get('user') ?? header(request, 'x-clickhouse-user') ?? 'default',
    password: url.searchParams.get('password') ?? header(request, 'x-clickhouse-key') ?? '',
  };
}

/** Reads everything but the body; `fields` are the multipart form's text fields, when the body is one. */
export function parseRequest(
  request: IncomingMessage,
  url: URL,
  fields: [string, string][] = [],
): ClickHouseRequest {
  const parameters: [string, string][] = [...url.searchParams, ...fields];
  const get = (name: string) => {
    let found: string | null = null;
    for (const [key, value] of parameters) if (key === name) found = value;
    return found;
  };
  const { user, password } = credentials(request, url);
  const settings: [string, string][] = [];
  const params: [string, string][] = [];
  for (const [key, value] of parameters) {
    if (key.startsWith('param_')) {
      params.push([key.slice('param_'.length), value]);
      continue;
    }
    if (PROTOCOL_PARAMS.has(key)) continue;
    if (!SETTING_NAME.test(key)) {
      throw new HttpInterfaceError('UNKNOWN_SETTING', `Unknown setting '${key.slice(0, 100)}'`);
    }
    settings.push([key, value]);
  }
  const timeout = get('session_timeout');
  const sessionTimeout = timeout === null ? null : Number(timeout);
  if (sessionTimeout !== null && (!Number.isFinite(sessionTimeout) || sessionTimeout < 0)) {
    throw new HttpInterfaceError('INVALID_SESSION_TIMEOUT', `Invalid session timeout: '${timeout}'`);
  }
  return {
    method: request.method ?? 'GET',
    user,
    password,
    queryId: get('query_id') ?? header(request, 'x-clickhouse-query-id') ?? null,
    queryParam: get('query'),
    database: get('database') ?? header(request, 'x-clickhouse-database') ?? null,
    defaultFormat: get('default_format') ?? header(request, 'x-clickhouse-format') ?? null,
    sessionId: get('session_id') || null,
    sessionTimeout,
    sessionCheck: truthy(get('session_check')),
    compress: truthy(get('compress')),
    decompress: truthy(get('decompress')),
    waitEndOfQuery: truthy(get('wait_end_of_query')),
    roles: parameters.filter(([key]) => key === 'role').map(([, value]) => value),
    settings,
    params,
  };
}

/**
 * The text fields of a multipart/form-data body (parsed by Node's own fetch implementation). A file part
 * is ClickHouse's "external data" (temporary tables sent with the query), which chDB's API cannot attach
 * to a query: refused.
 */
export async function formFields(body: Buffer, contentType: string): Promise<[string, string][]> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw new HttpInterfaceError('BAD_ARGUMENTS', 'Cannot parse the multipart/form-data body', {
      cause: error,
    });
  }
  const fields: [string, string][] = [];
  for (const [name, value] of form) {
    if (typeof value !== 'string') {
      throw new HttpInterfaceError(
        'NOT_IMPLEMENTED',
        'External data (temporary tables sent with the query) is not supported by this server',
      );
    }
    fields.push([name, value]);
  }
  return fields;
}
