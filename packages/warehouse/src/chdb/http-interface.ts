// ClickHouse's HTTP interface over an embedded chDB data directory: enough of it for @clickhouse/client
// (ping, query with FORMAT and {name:Type} parameters, command, insert, settings, database, gzip) and
// for curl. Two users:
//   - the all-in-one process (npm start) holds the chDB data directory, which no other process may open;
//     it serves this on 127.0.0.1 with a random password so that `tally sql|report|…` and analysts'
//     tools can read the warehouse while it runs;
//   - the tests run the ClickHouse backend (@clickhouse/client) against a real engine through it.
// It runs on its own chDB session (a connection with its own settings and current database), one
// request at a time, and is always bound to loopback.
import { randomUUID } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { clickhouseCodeOf } from '../errors.ts';
import { openSession } from './index.ts';

export interface ClickHouseHttpInterfaceOptions {
  /** chDB data directory; in the same process as another session on it, or alone. */
  dataDir: string;
  /** Port on 127.0.0.1 (0: any free port). */
  port?: number;
  /** Credentials a client must send (Basic auth, X-ClickHouse-User/Key or user/password params). */
  user?: string;
  password?: string;
}

export interface ClickHouseHttpInterface {
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

/** URL parameters that are part of the protocol, not ClickHouse settings. */
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
  'enable_http_compression',
  'buffer_size',
  'wait_end_of_query',
  'role',
  'stacktrace',
]);

/** HTTP status ClickHouse gives some error codes; any other error is 500. */
const STATUS_BY_CODE: Record<number, number> = {
  27: 400,
  53: 400,
  62: 400,
  60: 404,
  81: 404,
  115: 400,
  164: 403,
  456: 400,
  457: 400,
  516: 401,
};

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INSERT_WITH_DATA =
  /^\s*INSERT\s+INTO\s+(?:TABLE\s+)?((?:`[^`]+`|\w+)(?:\.(?:`[^`]+`|\w+))?)\s*(?:\(([^)]*)\))?\s*FORMAT\s+(JSONEachRow|JSONCompactEachRow|CSV|CSVWithNames|TSV|TabSeparated|TSVWithNames|TabSeparatedWithNames)\s*$/i;
const FORMAT_CLAUSE = /\bFORMAT\s+(\w+)\s*;?\s*$/i;

type InsertFormat =
  | 'JSONEachRow'
  | 'JSONCompactEachRow'
  | 'CSV'
  | 'CSVWithNames'
  | 'TSV'
  | 'TabSeparated'
  | 'TSVWithNames'
  | 'TabSeparatedWithNames';

/** An error to answer with ClickHouse's code and text. */
class ProtocolError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const identifier = (value: string) => `\`${value.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

function contentTypeOf(format: string): string {
  const f = format.toLowerCase();
  if (f.startsWith('json')) return 'application/json; charset=UTF-8';
  if (f.startsWith('tabseparated') || f.startsWith('tsv')) return 'text/tab-separated-values; charset=UTF-8';
  if (f.startsWith('csv')) return 'text/csv; charset=UTF-8; header=absent';
  if (['rowbinary', 'native', 'parquet', 'arrow', 'orc', 'avro'].some((b) => f.startsWith(b))) {
    return 'application/octet-stream';
  }
  return 'text/plain; charset=UTF-8';
}

function decodeBody(body: Buffer, encoding: string | undefined): Buffer {
  switch ((encoding ?? '').toLowerCase()) {
    case '':
    case 'identity':
      return body;
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      throw new ProtocolError(48, `Unsupported Content-Encoding '${encoding}'. (NOT_IMPLEMENTED)`);
  }
}

function credentialsOf(request: IncomingMessage, url: URL): { user: string; password: string } {
  const basic = /^Basic\s+(.+)$/i.exec(request.headers.authorization ?? '');
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString();
    const colon = decoded.indexOf(':');
    return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    user: url.searchParams.get('user') ?? header('x-clickhouse-user') ?? 'default',
    password: url.searchParams.get('password') ?? header('x-clickhouse-key') ?? '',
  };
}

export async function serveClickHouseHttp(
  options: ClickHouseHttpInterfaceOptions,
): Promise<ClickHouseHttpInterface> {
  const session = openSession(options.dataDir);
  const expectedUser = options.user ?? 'default';
  const expectedPassword = options.password ?? '';
  const version = (await session.queryAsync('SELECT version()', { format: 'TabSeparated' })).text().trim();

  // One request at a time on the session: SET and USE are session state and must not interleave.
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const result = tail.then(work);
    tail = result.catch(() => {});
    return result;
  };

  async function execute(url: URL, body: Buffer): Promise<{ output: Buffer; summary: object }> {
    const queryParam = url.searchParams.get('query') ?? '';
    const database = url.searchParams.get('database');
    const defaultFormat = url.searchParams.get('default_format') ?? 'TabSeparated';
    const settings: string[] = [];
    try {
      for (const [key, value] of url.searchParams) {
        if (PROTOCOL_PARAMS.has(key)) continue;
        if (!NAME.test(key)) throw new ProtocolError(115, `Unknown setting '${key}'. (UNKNOWN_SETTING)`);
        // Query parameters (param_x) arrive in ClickHouse's escaped text form; SET param_x = '<that
        // text>' gives them the meaning the server would.
        await session.queryAsync(`SET ${key} = ${quote(value)}`);
        if (!key.startsWith('param_')) settings.push(key);
      }
      if (database) await session.queryAsync(`USE ${identifier(database)}`);
      const started = process.hrtime.bigint();
      const insert = queryParam && body.length > 0 ? INSERT_WITH_DATA.exec(queryParam) : null;
      let output = Buffer.alloc(0);
      let written = 0;
      let read = { rows: 0, bytes: 0 };
      if (insert) {
        const columns = insert[2]
          ?.split(',')
          .map((c) => c.trim().replace(/^`|`$/g, ''))
          .filter(Boolean);
        const summary = await session.insert({
          table: (insert[1] as string).replace(/`/g, ''),
          ...(columns?.length ? { columns } : {}),
          format: insert[3] as InsertFormat,
          values: body,
        });
        written = summary.rowsWritten;
      } else {
        const sql = queryParam
          ? body.length > 0
            ? `${queryParam}\n${body.toString('utf8')}`
            : queryParam
          : body.toString('utf8');
        if (!sql.trim()) throw new ProtocolError(62, 'Empty query. (SYNTAX_ERROR)');
        const result = await session.queryAsync(sql, { format: defaultFormat });
        output = Buffer.from(result.bytes());
        read = { rows: result.rowsRead, bytes: result.bytesRead };
      }
      const elapsed = process.hrtime.bigint() - started;
      return {
        output,
        summary: {
          read_rows: String(read.rows),
          read_bytes: String(read.bytes),
          written_rows: String(written),
          written_bytes: '0',
          total_rows_to_read: String(read.rows),
          result_rows: '0',
          result_bytes: String(output.length),
          elapsed_ns: String(elapsed),
        },
      };
    } finally {
      if (database) await session.queryAsync('USE default').catch(() => {});
      for (const name of settings) await session.queryAsync(`SET ${name} = DEFAULT`).catch(() => {});
    }
  }

  function respond(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    status: number,
    headers: Record<string, string>,
    payload: Buffer | string,
    queryId: string,
  ) {
    let data = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const gzip =
      /\bgzip\b/.test(request.headers['accept-encoding'] ?? '') &&
      url.searchParams.get('enable_http_compression') === '1';
    if (gzip) {
      data = gzipSync(data);
      headers['Content-Encoding'] = 'gzip';
    }
    response.writeHead(status, {
      ...headers,
      'Content-Length': String(data.length),
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Server-Display-Name': 'tally-chdb',
      'X-ClickHouse-Timezone': 'UTC',
    });
    response.end(request.method === 'HEAD' ? undefined : data);
  }

  function errorText(code: number, message: string): string {
    const text = /^Code: \d+\./.test(message) ? message : `Code: ${code}. DB::Exception: ${message}`;
    return `${text} (version ${version})\n`;
  }

  async function handle(request: IncomingMessage, response: ServerResponse, body: Buffer) {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const queryId = url.searchParams.get('query_id') ?? randomUUID();
    const text = { 'Content-Type': 'text/plain; charset=UTF-8' };
    const fail = (code: number, message: string) =>
      respond(
        request,
        response,
        url,
        STATUS_BY_CODE[code] ?? 500,
        { ...text, 'X-ClickHouse-Exception-Code': String(code) },
        errorText(code, message),
        queryId,
      );
    if (
      url.pathname === '/ping' ||
      (url.pathname === '/' && request.method === 'GET' && !url.searchParams.has('query'))
    ) {
      return respond(request, response, url, 200, text, 'Ok.\n', queryId);
    }
    if (url.pathname !== '/') {
      return respond(request, response, url, 404, text, `There is no handle ${url.pathname}\n`, queryId);
    }
    const { user, password } = credentialsOf(request, url);
    if (user !== expectedUser || password !== expectedPassword) {
      return fail(
        516,
        `${user}: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)`,
      );
    }
    try {
      const decoded = decodeBody(body, request.headers['content-encoding']);
      const queryParam = url.searchParams.get('query') ?? '';
      const statement = queryParam || decoded.toString('utf8');
      const explicit = /^\s*INSERT\b/i.test(statement) ? null : FORMAT_CLAUSE.exec(statement);
      const format = explicit?.[1] ?? url.searchParams.get('default_format') ?? 'TabSeparated';
      const { output, summary } = await exclusive(() => execute(url, decoded));
      respond(
        request,
        response,
        url,
        200,
        {
          'Content-Type': contentTypeOf(format),
          'X-ClickHouse-Format': format,
          'X-ClickHouse-Summary': JSON.stringify(summary),
        },
        output,
        queryId,
      );
    } catch (error) {
      const message = String((error as Error).message ?? error)
        .replace(/^Query failed:\s*/, '')
        .trim();
      const code =
        error instanceof ProtocolError
          ? error.code
          : ((error as { clickhouseCode?: number }).clickhouseCode ?? clickhouseCodeOf(message) ?? 1001);
      fail(code, message);
    }
  }

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      handle(request, response, Buffer.concat(chunks)).catch(() => {
        if (!response.headersSent) response.writeHead(500);
        response.end();
      });
    });
  });
  // Longer than the client's idle socket TTL (2.5 s by default), so it never reuses a closed socket.
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await tail;
      session.close();
    },
  };
}

/** Where a running process publishes the HTTP interface of the data directory it holds. */
export const endpointFile = (tallyDataDir: string) => join(tallyDataDir, 'warehouse-http.json');

export interface PublishedEndpoint {
  url: string;
  user: string;
  password: string;
  pid: number;
}

/** Writes the endpoint file (readable by the owner only: it holds the password). */
export function publishEndpoint(tallyDataDir: string, endpoint: PublishedEndpoint): void {
  const file = endpointFile(tallyDataDir);
  writeFileSync(`${file}.tmp`, JSON.stringify(endpoint), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

export function unpublishEndpoint(tallyDataDir: string): void {
  rmSync(endpointFile(tallyDataDir), { force: true });
}

/** The endpoint a running process published, or null (none, or left behind by a process that died). */
export function readPublishedEndpoint(tallyDataDir: string): PublishedEndpoint | null {
  try {
    const endpoint = JSON.parse(readFileSync(endpointFile(tallyDataDir), 'utf8')) as PublishedEndpoint;
    process.kill(endpoint.pid, 0); // throws when no such process
    return endpoint;
  } catch {
    return null;
  }
}

/** A ClickHouse URL with the endpoint's credentials in it, for openClickHouseWarehouse. */
export function endpointUrl(endpoint: PublishedEndpoint): string {
  const url = new URL(endpoint.url);
  url.username = encodeURIComponent(endpoint.user);
  url.password = encodeURIComponent(endpoint.password);
  return url.toString().replace(/\/$/, '');
}
