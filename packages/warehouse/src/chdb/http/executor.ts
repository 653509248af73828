// Runs one request's statement on chDB, with nothing of it outliving the request:
//   - a fresh chDB connection per request (chDB gives each connection its own settings, current database
//     and query parameters, and opening one on the data directory the process holds costs ~1 ms), on
//     which, in order: the user's readonly level, the default database, the session's SET/USE statements
//     (sessions.ts), the request's database, its settings (SET, so that the engine checks them as
//     ClickHouse does: readonly users get READONLY) and its parameters (SET param_x: the value keeps
//     ClickHouse's escaped text form); then the statement; then the connection is closed;
//   - INSERT data passes as bytes to the engine's parser (any input format: Native, RowBinary, Parquet,
//     Arrow, …) through a private temporary file and `INSERT … FROM INFILE`; results come back as the
//     engine's bytes in any output format. (chDB's API takes INSERT data only inside the query text, and
//     that path cuts binary data short: measured, a 25 KB Native or RowBinary body fails after 658 rows,
//     which is why chdb's own insert() accepts text formats only; FROM INFILE reads every size exactly.)
//   - what chDB cannot do as a server would is refused before anything runs (guard()).
// Connections run in parallel (chDB runs each on a libuv worker thread); at most `maxConcurrent` at
// once, so that queries over HTTP always leave threads to the consumers and the gateway.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'chdb';
import { HttpInterfaceError } from './errors.ts';
import type { NamedSession, SessionRegistry } from './sessions.ts';
import type { Statement } from './statement.ts';
import type { WarehouseHttpUser } from './users.ts';

/**
 * Output formats whose streamed chunks concatenate to the whole result (checked in chdb.test.ts); others
 * (Parquet, Arrow, ORC, JSON with its header and footer, Pretty…) are sent once the query finished.
 */
export const STREAMABLE_FORMATS = new Set(
  [
    'TabSeparated',
    'TSV',
    'TabSeparatedRaw',
    'TSVRaw',
    'CSV',
    'JSONEachRow',
    'JSONLines',
    'NDJSON',
    'JSONCompactEachRow',
    'JSONStringsEachRow',
    'JSONCompactStringsEachRow',
    'RowBinary',
    'Native',
    'LineAsString',
  ].map((f) => f.toLowerCase()),
);

/** Statements chDB can stream a result of (its streaming API refuses the others). */
const STREAMABLE_KINDS = new Set(['SELECT', 'WITH', 'SHOW', 'DESCRIBE', 'DESC', 'EXPLAIN', 'EXISTS']);

/** Functions and table functions that reach the host's files, processes or network. */
const HOST_FUNCTIONS = new Set(
  [
    'file',
    'fileCluster',
    'url',
    'urlCluster',
    'executable',
    'remote',
    'remoteSecure',
    'cluster',
    'clusterAllReplicas',
    's3',
    's3Cluster',
    'gcs',
    'hdfs',
    'hdfsCluster',
    'azureBlobStorage',
    'azureBlobStorageCluster',
    'mysql',
    'postgresql',
    'mongodb',
    'redis',
    'sqlite',
    'odbc',
    'jdbc',
    'iceberg',
    'icebergS3',
    'icebergAzure',
    'icebergHDFS',
    'icebergLocal',
    'deltaLake',
    'deltaLakeLocal',
    'hudi',
    'input',
  ].map((f) => f.toLowerCase()),
);

/** Settings clickhouse-local (so chDB) changes from a ClickHouse server's defaults. */
const SERVER_DEFAULTS: [string, string][] = [
  ['allow_introspection_functions', '0'],
  ['implicit_select', '0'],
];

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const identifier = (value: string) => `\`${value.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

export interface QueryPlan {
  user: WarehouseHttpUser;
  /** ClickHouse's readonly level of this query: the user's, or 2 for a writer's GET (as a server does). */
  readonly: 0 | 1 | 2;
  database: string;
  requestDatabase: string | null;
  session: NamedSession | null;
  settings: [string, string][];
  params: [string, string][];
  statement: Statement;
  /** The format of a result without a FORMAT clause. */
  defaultFormat: string;
  /** Send the result only once the query finished (wait_end_of_query=1, or a format that cannot stream). */
  waitEnd: boolean;
}

export interface Summary {
  read_rows: string;
  read_bytes: string;
  written_rows: string;
  written_bytes: string;
  total_rows_to_read: string;
  result_rows: string;
  result_bytes: string;
  elapsed_ns: string;
}

/** A started query: its first bytes are there (or it finished); the rest comes from `rest`. */
export interface QueryRun {
  format: string;
  head: Buffer;
  rest: AsyncIterable<Buffer>;
  summary(): Summary;
  /** Ends the query without reading the rest (the client went away); idempotent. */
  cancel(): void;
}

/** Refuses, before anything runs, what would be unsafe or what chDB would not do as a server does. */
export function guard(plan: QueryPlan): void {
  const { statement } = plan;
  if (!statement.kind) throw new HttpInterfaceError('SYNTAX_ERROR', 'Empty query');
  if (statement.hostFileClause) {
    throw new HttpInterfaceError(
      'INTO_OUTFILE_NOT_ALLOWED',
      "INTO OUTFILE and FROM INFILE are not allowed over the HTTP interface (they would use the server's files)",
    );
  }
  if (statement.insertSelect && statement.data) {
    throw new HttpInterfaceError(
      'NOT_IMPLEMENTED',
      'INSERT … SELECT with data sent in the request (the input() form) is not supported by this server: ' +
        'send the data with INSERT INTO <table> FORMAT <format>',
    );
  }
  if (plan.session && statement.kind === 'CREATE' && /^\s*CREATE\s+TEMPORARY\b/i.test(statement.sql)) {
    throw new HttpInterfaceError(
      'NOT_IMPLEMENTED',
      'Temporary tables in an HTTP session are not supported by this server (each query runs on its own connection)',
    );
  }
  if (plan.user.readonly) {
    const reaching = [...statement.calls].find((call) => HOST_FUNCTIONS.has(call));
    if (reaching) {
      throw new HttpInterfaceError(
        'ACCESS_DENIED',
        `${plan.user.name}: Not enough privileges. ${reaching}() reads the server's files or network, which a ` +
          'read-only user may not',
      );
    }
    if (statement.kind === 'KILL') {
      throw new HttpInterfaceError(
        'ACCESS_DENIED',
        `${plan.user.name}: Not enough privileges. To execute this query, it's necessary to have the grant KILL QUERY ON *.*`,
      );
    }
  }
}

/** A counting semaphore with a bounded queue: over it, TOO_MANY_SIMULTANEOUS_QUERIES, as a server says. */
class Slots {
  readonly #waiting: (() => void)[] = [];
  #free: number;
  readonly #maxQueued: number;
  constructor(size: number, maxQueued: number) {
    this.#free = size;
    this.#maxQueued = maxQueued;
  }
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else {
      if (this.#waiting.length >= this.#maxQueued) {
        throw new HttpInterfaceError('TOO_MANY_SIMULTANEOUS_QUERIES', 'Too many simultaneous queries');
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

export interface ExecutorOptions {
  dataDir: string;
  /** Queries over HTTP running at once (the rest wait in line). */
  maxConcurrent: number;
  /** Queries waiting for a turn before new ones are refused. */
  maxQueued: number;
}

export class Executor {
  readonly #dataDir: string;
  readonly #slots: Slots;
  readonly #open = new Set<Session>();
  /** Where INSERT data waits for the engine to read it (owner only; removed at close). */
  readonly #spool = mkdtempSync(join(tmpdir(), 'tally-warehouse-http-'));

  constructor(options: ExecutorOptions) {
    this.#dataDir = options.dataDir;
    this.#slots = new Slots(options.maxConcurrent, options.maxQueued);
  }

  async run(plan: QueryPlan, sessions: SessionRegistry): Promise<QueryRun> {
    guard(plan);
    const release = await this.#slots.take();
    const started = process.hrtime.bigint();
    const connection = new Session(this.#dataDir);
    this.#open.add(connection);
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.#open.delete(connection);
      connection.close();
      release();
    };
    try {
      await this.#prepare(connection, plan);
      const run = await this.#execute(connection, plan, started, finish);
      const { statement, session } = plan;
      if (session && (statement.kind === 'SET' || statement.kind === 'USE'))
        sessions.record(session, statement.sql);
      return run;
    } catch (error) {
      finish();
      throw error;
    }
  }

  async #prepare(connection: Session, plan: QueryPlan): Promise<void> {
    // chDB takes several statements in one call: each round trip to its thread costs ~1 ms, so the
    // fixed part is one call and the request's own part another (the session's statements go between).
    const run = (statements: string[]) =>
      statements.length ? connection.queryAsync(statements.join(';\n'), { format: 'TabSeparated' }) : null;
    // chDB starts a connection as clickhouse-local does; the first SET puts back a server's defaults.
    const fixed = [...SERVER_DEFAULTS.map(([name, value]) => `${name} = ${value}`)];
    if (plan.readonly) fixed.push(`readonly = ${plan.readonly}`);
    await run([`SET ${fixed.join(', ')}`, `USE ${identifier(plan.database)}`]);
    for (const sql of plan.session?.statements ?? []) await run([sql]);
    const own: string[] = [];
    if (plan.requestDatabase) own.push(`USE ${identifier(plan.requestDatabase)}`);
    if (plan.settings.length) {
      own.push(`SET ${plan.settings.map(([name, value]) => `${name} = ${quote(value)}`).join(', ')}`);
    }
    for (const [name] of plan.params) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw new HttpInterfaceError('BAD_ARGUMENTS', `Invalid query parameter name '${name.slice(0, 100)}'`);
      }
    }
    if (plan.params.length) {
      own.push(`SET ${plan.params.map(([name, value]) => `param_${name} = ${quote(value)}`).join(', ')}`);
    }
    await run(own);
  }

  async #execute(
    connection: Session,
    plan: QueryPlan,
    started: bigint,
    finish: () => void,
  ): Promise<QueryRun> {
    const { statement } = plan;
    const format = statement.data ? 'TabSeparated' : (statement.format ?? plan.defaultFormat);
    const summary: Summary = {
      read_rows: '0',
      read_bytes: '0',
      written_rows: '0',
      written_bytes: '0',
      total_rows_to_read: '0',
      result_rows: '0',
      result_bytes: '0',
      elapsed_ns: '0',
    };
    const done = () => {
      summary.elapsed_ns = String(process.hrtime.bigint() - started);
      return summary;
    };
    const empty: AsyncIterable<Buffer> = { async *[Symbol.asyncIterator]() {} };
    if (statement.data) {
      const file = join(this.#spool, randomUUID());
      await writeFile(file, statement.data, { mode: 0o600 });
      try {
        const sql = `${statement.insertHead} FROM INFILE ${quote(file)} ${statement.insertSettings} FORMAT ${statement.format}`;
        const inserted = await connection.queryAsync(sql, { format: 'TabSeparated' });
        // For an INSERT, the engine's "rows read" are the rows it parsed from the data and wrote.
        summary.written_rows = String(inserted.rowsRead);
        summary.written_bytes = String(inserted.bytesRead);
      } finally {
        await rm(file, { force: true });
      }
      finish();
      return { format, head: Buffer.alloc(0), rest: empty, summary: done, cancel: finish };
    }
    const streamable =
      !plan.waitEnd && STREAMABLE_KINDS.has(statement.kind) && STREAMABLE_FORMATS.has(format.toLowerCase());
    if (!streamable) {
      const result = await connection.queryAsync(statement.sql, { format: plan.defaultFormat });
      const head = Buffer.from(result.bytes());
      summary.read_rows = String(result.rowsRead);
      summary.read_bytes = String(result.bytesRead);
      summary.total_rows_to_read = String(result.rowsRead);
      summary.result_bytes = String(head.length);
      finish();
      return { format, head, rest: empty, summary: done, cancel: finish };
    }
    // The first chunk is awaited before answering, so that an error before any row is a proper error status.
    const stream = connection.queryStream(statement.sql, { format: plan.defaultFormat });
    const chunks = stream[Symbol.asyncIterator]();
    let rows = 0;
    let bytes = 0;
    const next = async (): Promise<Buffer | null> => {
      const step = await chunks.next();
      if (step.done) return null;
      rows += step.value.numRows;
      bytes += step.value.numBytes;
      summary.result_rows = String(rows);
      summary.result_bytes = String(bytes);
      return Buffer.from(step.value.raw());
    };
    let first: Buffer | null;
    try {
      first = await next();
    } catch (error) {
      stream.cancel();
      throw error;
    }
    if (first === null) finish();
    const rest: AsyncIterable<Buffer> = {
      async *[Symbol.asyncIterator]() {
        if (first === null) return;
        try {
          for (let chunk = await next(); chunk !== null; chunk = await next()) yield chunk;
        } finally {
          stream.cancel();
          finish();
        }
      },
    };
    const cancel = () => {
      stream.cancel();
      finish();
    };
    return { format, head: first ?? Buffer.alloc(0), rest, summary: done, cancel };
  }

  /** Closes the connections of queries still running (the server stopped taking requests). */
  close(): void {
    for (const connection of this.#open) connection.close();
    this.#open.clear();
    rmSync(this.#spool, { recursive: true, force: true });
  }
}
