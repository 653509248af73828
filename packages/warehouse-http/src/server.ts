// ClickHouse's HTTP interface over an embedded chDB data directory, for the tools analysts use
// (clickhouse-connect, @clickhouse/client, curl, BI tools) and for the tally CLI while `npm start` holds
// the directory (chDB lets one process open it). The protocol is read in request.ts, compression is in
// compression.ts, users in users.ts, sessions in sessions.ts, running the statement in executor.ts; here
// the pieces meet: route, authenticate (before reading the body), read and decode the body, plan, run,
// answer with ClickHouse's headers (X-ClickHouse-Query-Id, -Format, -Timezone, -Summary,
// -Exception-Code) and compression, and map every failure to ClickHouse's error answer in one place.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openSession } from '@tally/warehouse/chdb';
import type { Session } from 'chdb';
import {
  chooseResponseCoding,
  decodeContent,
  decodeNativeBlocks,
  NativeBlockEncoder,
  type NativeMethod,
  responseEncoder,
} from './compression.ts';
import { exceptionOf, exceptionText, HttpInterfaceError, httpStatusOf } from './errors.ts';
import { Executor, functionCatalogOf, type QueryRun } from './executor.ts';
import { type ClickHouseRequest, formFields, parseRequest } from './request.ts';
import { type NamedSession, SessionRegistry } from './sessions.ts';
import { scanStatement } from './statement.ts';
import { HttpUsers, type WarehouseHttpUser } from './users.ts';

export type { WarehouseHttpUser } from './users.ts';

export interface ClickHouseHttpInterfaceOptions {
  /** chDB data directory; in the same process as another session on it, or alone. */
  dataDir: string;
  /** Address to listen on (default 127.0.0.1: only this machine). */
  host?: string;
  /** Port (0: any free port). */
  port?: number;
  /** The current database of a query that names none (created if missing). Default `tally`. */
  database?: string;
  /** Who may connect. Default: `default` with an empty password, a writer (as a fresh ClickHouse server). */
  users?: readonly WarehouseHttpUser[];
  /**
   * Queries running at once; more wait in line. Each running chDB call holds a thread of libuv's pool,
   * which the whole process shares (file I/O, LMDB, the consumers' warehouse): the default leaves two
   * (UV_THREADPOOL_SIZE − 2, at least 1; npm start runs with a pool of 8).
   */
  maxConcurrentQueries?: number;
  /** Queries waiting in line before new ones get TOO_MANY_SIMULTANEOUS_QUERIES (default 100). */
  maxQueuedQueries?: number;
  /** Largest request body, compressed or not (default 256 MiB). */
  maxRequestBytes?: number;
  /** Internal failures (never sent to the client). */
  onInternalError?: (error: unknown) => void;
}

export interface ClickHouseHttpInterface {
  /** http://<host>:<port> as a client on this machine reaches it. */
  url: string;
  close(): Promise<void>;
}

const TEXT = 'text/plain; charset=UTF-8';

function contentTypeOf(format: string): string {
  const f = format.toLowerCase();
  if (f.startsWith('json') || f === 'ndjson') return 'application/json; charset=UTF-8';
  if (f.startsWith('tabseparated') || f.startsWith('tsv')) return 'text/tab-separated-values; charset=UTF-8';
  if (f.startsWith('csv')) return 'text/csv; charset=UTF-8; header=absent';
  if (f === 'xml') return 'application/xml; charset=UTF-8';
  if (
    [
      'rowbinary',
      'native',
      'parquet',
      'arrow',
      'orc',
      'avro',
      'msgpack',
      'protobuf',
      'capnproto',
      'bson',
      'npy',
    ].some((b) => f.startsWith(b))
  ) {
    return 'application/octet-stream';
  }
  return TEXT;
}

const setting = (request: ClickHouseRequest, name: string): string | undefined =>
  request.settings.findLast(([key]) => key === name)?.[1];

async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit)
    throw new HttpInterfaceError('QUERY_IS_TOO_LARGE', `The request body is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit)
      throw new HttpInterfaceError('QUERY_IS_TOO_LARGE', `The request body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function serveClickHouseHttp(
  options: ClickHouseHttpInterfaceOptions,
): Promise<ClickHouseHttpInterface> {
  const database = options.database ?? 'tally';
  const maxRequestBytes = options.maxRequestBytes ?? 256 * 1024 * 1024;
  const users = new HttpUsers(options.users ?? [{ name: 'default', password: '', readonly: 0 }]);
  // Kept open while the server runs: the engine stays up, and each request's connection is cheap.
  const anchor: Session = openSession(options.dataDir);
  let version = '';
  let timezone = 'UTC';
  let catalog: Awaited<ReturnType<typeof functionCatalogOf>>;
  try {
    catalog = await functionCatalogOf(anchor);
    await anchor.queryAsync(`CREATE DATABASE IF NOT EXISTS \`${database.replace(/`/g, '')}\``);
    const [v = '', tz = 'UTC'] = (
      await anchor.queryAsync('SELECT version(), timezone()', { format: 'TabSeparated' })
    )
      .text()
      .trim()
      .split('\t');
    version = v;
    timezone = tz;
  } catch (error) {
    anchor.close();
    throw error;
  }
  const executor = new Executor({
    dataDir: options.dataDir,
    maxConcurrent:
      options.maxConcurrentQueries ?? Math.max(1, (Number(process.env.UV_THREADPOOL_SIZE) || 4) - 2),
    maxQueued: options.maxQueuedQueries ?? 100,
    catalog,
  });
  const sessions = new SessionRegistry();
  const displayName = hostname();

  function answerError(response: ServerResponse, queryId: string, error: unknown, user?: WarehouseHttpUser) {
    // Past the headers (the client went away mid-result, or the stream broke): the connection is all
    // there is left to end.
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const exception = exceptionOf(error);
    if (exception.internal) options.onInternalError?.(error);
    const message = user ? exception.message.replace(/^default: /, `${user.name}: `) : exception.message;
    const body = Buffer.from(exceptionText(exception.code, message, version));
    response.writeHead(httpStatusOf(exception.code), {
      'Content-Type': TEXT,
      'Content-Length': String(body.length),
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Server-Display-Name': displayName,
      'X-ClickHouse-Exception-Code': String(exception.code),
      'X-ClickHouse-Timezone': timezone,
    });
    response.end(body);
  }

  function answerText(request: IncomingMessage, response: ServerResponse, status: number, text: string) {
    response.writeHead(status, { 'Content-Type': TEXT, 'Content-Length': String(Buffer.byteLength(text)) });
    response.end(request.method === 'HEAD' ? undefined : text);
  }

  async function answerQuery(
    request: IncomingMessage,
    response: ServerResponse,
    parsed: ClickHouseRequest,
    run: QueryRun,
    queryId: string,
  ): Promise<void> {
    const headers: Record<string, string> = {
      'Content-Type': contentTypeOf(run.format),
      'X-ClickHouse-Format': run.format,
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Server-Display-Name': displayName,
      'X-ClickHouse-Timezone': timezone,
      'X-ClickHouse-Summary': JSON.stringify(run.summary()),
    };
    const encoders: Transform[] = [];
    if (parsed.compress) {
      const method = (setting(parsed, 'network_compression_method') ?? 'LZ4').toUpperCase();
      encoders.push(
        new NativeBlockEncoder(
          (['LZ4', 'ZSTD', 'NONE'].includes(method) ? method : 'LZ4') as NativeMethod,
          1,
        ),
      );
    }
    const coding =
      setting(parsed, 'enable_http_compression') === '1' ||
      setting(parsed, 'enable_http_compression') === 'true'
        ? chooseResponseCoding(request.headers['accept-encoding'])
        : null;
    if (coding) {
      const level = Math.min(
        9,
        Math.max(1, Number(setting(parsed, 'http_zlib_compression_level') ?? 3) || 3),
      );
      encoders.push(responseEncoder(coding, level));
      headers['Content-Encoding'] = coding;
    }
    // A result that may still fail after the first bytes went out carries ClickHouse's exception tag, so
    // that clients can tell an error written into the body from data.
    const tag = randomBytes(8).toString('hex');
    headers['X-ClickHouse-Exception-Tag'] = tag;
    if (request.method === 'HEAD') {
      run.cancel();
      response.writeHead(200, headers);
      response.end();
      return;
    }
    response.writeHead(200, headers);
    async function* body(): AsyncGenerator<Buffer> {
      if (run.head.length) yield run.head;
      try {
        for await (const chunk of run.rest) yield chunk;
      } catch (error) {
        const exception = exceptionOf(error);
        if (exception.internal) options.onInternalError?.(error);
        const text = exceptionText(exception.code, exception.message, version);
        yield Buffer.from(
          `__exception__\r\n${tag}\r\n${text}\r\n${Buffer.byteLength(text)} ${tag}\r\n__exception__\r\n`,
        );
      }
    }
    try {
      await pipeline([Readable.from(body(), { objectMode: false }), ...encoders, response]);
    } finally {
      run.cancel();
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    let queryId = url.searchParams.get('query_id') ?? randomUUID();
    const method = request.method ?? 'GET';
    if (url.pathname === '/ping' || url.pathname === '/replicas_status') {
      request.resume();
      return answerText(request, response, 200, 'Ok.\n');
    }
    if (url.pathname === '/' && (method === 'GET' || method === 'HEAD') && !url.searchParams.has('query')) {
      request.resume();
      return answerText(request, response, 200, 'Ok.\n');
    }
    if (url.pathname !== '/') {
      request.resume();
      return answerText(
        request,
        response,
        404,
        `There is no handle ${url.pathname.slice(0, 200)}\n\nUse / or /ping for health checks.\nOr /replicas_status for more sophisticated health checks.\n\nSend queries from your program with POST method or GET /?query=...\n`,
      );
    }
    let user: WarehouseHttpUser | undefined;
    let session: NamedSession | null = null;
    // The client going away before its answer is complete ends its query in the engine.
    const abandoned = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished)
        abandoned.abort(new HttpInterfaceError('ABORTED', 'The client went away'));
    });
    try {
      if (method !== 'GET' && method !== 'POST' && method !== 'HEAD') {
        throw new HttpInterfaceError(
          'UNSUPPORTED_METHOD',
          `HTTP method ${method.slice(0, 20)} is not supported`,
        );
      }
      let parsed = parseRequest(request, url);
      queryId = parsed.queryId ?? queryId;
      user = users.authenticate(parsed.user, parsed.password);
      let body = await readBody(request, maxRequestBytes);
      const contentType = request.headers['content-type'] ?? '';
      if (/^multipart\/form-data\b/i.test(contentType)) {
        parsed = parseRequest(request, url, await formFields(body, contentType));
        body = Buffer.alloc(0);
      }
      body = decodeContent(body, request.headers['content-encoding'], maxRequestBytes);
      if (parsed.decompress && body.length) {
        const verify = setting(parsed, 'http_native_compression_disable_checksumming_on_decompress') !== '1';
        body = decodeNativeBlocks(body, verify, maxRequestBytes);
      }
      if (parsed.roles.length) {
        throw new HttpInterfaceError(
          'UNKNOWN_ROLE',
          `There is no role \`${parsed.roles[0]?.slice(0, 100)}\` in user directories`,
        );
      }
      const query = parsed.queryParam
        ? body.length
          ? Buffer.concat([Buffer.from(parsed.queryParam), Buffer.from('\n'), body])
          : Buffer.from(parsed.queryParam)
        : body;
      const statement = scanStatement(query);
      if (parsed.sessionId) {
        session = sessions.acquire(user.name, parsed.sessionId, parsed.sessionTimeout, parsed.sessionCheck);
      }
      const waitSetting = setting(parsed, 'http_wait_end_of_query');
      const run = await executor.run(
        {
          user,
          readonly: user.readonly || (method === 'POST' ? 0 : 2),
          database,
          requestDatabase: parsed.database,
          session,
          settings: parsed.settings,
          params: parsed.params,
          statement,
          defaultFormat: parsed.defaultFormat ?? 'TabSeparated',
          waitEnd: parsed.waitEndOfQuery || waitSetting === '1' || waitSetting === 'true',
        },
        sessions,
        abandoned.signal,
      );
      await answerQuery(request, response, parsed, run, queryId);
    } catch (error) {
      if (!request.complete) response.setHeader('Connection', 'close');
      answerError(response, queryId, error, user);
    } finally {
      if (session) sessions.release(session);
    }
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.onInternalError?.(error);
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  // Longer than @clickhouse/client's idle socket TTL (2.5 s), so it never reuses a socket closed here.
  server.keepAliveTimeout = 10_000;
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
  } catch (error) {
    anchor.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  // A wildcard address is reached on this machine through loopback.
  const reachable =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${reachable}:${port}`,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      sessions.close();
      await executor.close();
      anchor.close();
    },
  };
}
