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
import { parseAstDump } from '@tally/warehouse';
import { Session } from 'chdb';
import { HttpInterfaceError } from './errors.ts';
import type { NamedSession, SessionRegistry } from './sessions.ts';
import type { Statement } from './statement.ts';
import {
  type CatalogRow,
  checkSetting,
  checkStatement,
  type FunctionCatalog,
  functionCatalog,
} from './statement-policy.ts';
import { limitSettings, type WarehouseHttpUser } from './users.ts';

/**
 * Output formats whose streamed chunks concatenate to the whole result (checked in server.test.ts); others
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

/** Statements chDB can stream a result of (its streaming API refuses SHOW, DESCRIBE, EXPLAIN, EXISTS). */
const STREAMABLE_KINDS = new Set(['SELECT', 'WITH']);

/** Settings clickhouse-local (so chDB) changes from a ClickHouse server's defaults. */
const SERVER_DEFAULTS: [string, string][] = [
  ['allow_introspection_functions', '0'],
  ['implicit_select', '0'],
];

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const identifier = (value: string) => `\`${value.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

/**
 * The engine's error about the statement given to formatQuery, as if the statement itself had been run: the
 * same code, the message without the query that carried it (`In scope SELECT formatQuery(…)`).
 */
function statementError(error: unknown): unknown {
  const message = (error as Error | undefined)?.message;
  if (typeof message !== 'string') return error;
  const cut = message.indexOf(': In scope SELECT formatQuery(');
  if (cut < 0) return error;
  const code = (error as { clickhouseCode?: number }).clickhouseCode;
  return Object.assign(
    new Error(`${message.slice(0, cut)}.${/\(([A-Z_]+)\)/.exec(message.slice(cut))?.[0] ?? ''}`),
    {
      clickhouseCode: code,
    },
  );
}

/** Settings of the policy's own queries on a writer's connection: whole answers, read as written. */
const INSPECTION_SETTINGS = [
  'limit = 0',
  'offset = 0',
  'max_result_rows = 0',
  'max_result_bytes = 0',
  "result_overflow_mode = 'throw'",
  'output_format_tsv_crlf_end_of_line = 0',
].join(', ');

/** The settings that carry the user's limits, with their values: the user may lower them, not raise them. */
const limitNames = (user: WarehouseHttpUser) => new Map(limitSettings(user.limits));

/** An INSERT with data, as the engine runs it: its data read from the spooled `file`. */
const insertFrom = (statement: Statement, file: string) =>
  `${statement.insertHead} FROM INFILE ${quote(file)} ${statement.insertSettings} FORMAT ${statement.format}`;

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

/**
 * Refuses, before anything runs, what chDB would not do as a server does. What a statement may do (files,
 * network, statements, settings) is decided later, from the engine's parse (statement-policy.ts).
 */
export function guard(plan: QueryPlan): void {
  const { statement } = plan;
  if (!statement.kind) throw new HttpInterfaceError('SYNTAX_ERROR', 'Empty query');
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
  const subject = { user: plan.user.name, limits: limitNames(plan.user) };
  for (const [name, value] of plan.settings) checkSetting(subject, name, value);
}

/**
 * A counting semaphore with a bounded queue (over it, TOO_MANY_SIMULTANEOUS_QUERIES, as a server says) and
 * one slot kept for writers: read-only users' queries, however many and however slow, never take the last
 * free slot, so the writer (`tally sql`, `tally report`, a KILL QUERY's author) always gets a turn.
 */
export class Slots {
  readonly #waiting: { writer: boolean; resolve: () => void }[] = [];
  #free: number;
  readonly #reserved: number;
  readonly #maxQueued: number;
  constructor(size: number, maxQueued: number) {
    this.#free = size;
    this.#reserved = size > 1 ? 1 : 0;
    this.#maxQueued = maxQueued;
  }
  #available(writer: boolean): boolean {
    return this.#free > (writer ? 0 : this.#reserved);
  }
  /** Waits for a slot (a writer's may be the kept one); gives up when `signal` aborts. */
  async take(writer: boolean, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#available(writer)) this.#free--;
    else {
      if (this.#waiting.length >= this.#maxQueued) {
        throw new HttpInterfaceError('TOO_MANY_SIMULTANEOUS_QUERIES', 'Too many simultaneous queries');
      }
      await new Promise<void>((resolve, reject) => {
        const waiter = {
          writer,
          resolve: () => {
            signal?.removeEventListener('abort', abandon);
            resolve();
          },
        };
        const abandon = () => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', abandon, { once: true });
        this.#waiting.push(waiter);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#free++;
      this.#wake();
    };
  }
  /** Hands free slots to the first waiters that may take them (a reader never the kept slot). */
  #wake(): void {
    for (let i = 0; i < this.#waiting.length && this.#free > 0; ) {
      const waiter = this.#waiting[i] as { writer: boolean; resolve: () => void };
      if (!this.#available(waiter.writer)) {
        i++;
        continue;
      }
      this.#free--;
      this.#waiting.splice(i, 1);
      waiter.resolve();
    }
  }
}

export interface ExecutorOptions {
  dataDir: string;
  /** Queries over HTTP running at once (the rest wait in line); one is kept for writers. */
  maxConcurrent: number;
  /** Queries waiting for a turn before new ones are refused. */
  maxQueued: number;
  /** The engine's function catalog, for the statement policy (read once at start: functionCatalogOf). */
  catalog: FunctionCatalog;
}

/** A statement the policy allowed, by user and text (the verdict depends on nothing else: see guard()). */
const ALLOWED_CACHE_SIZE = 512;

/** Reads the engine's function catalog, from which the policy's function allow-list is made. */
export async function functionCatalogOf(connection: Session): Promise<FunctionCatalog> {
  const rows = (
    await connection.queryAsync(
      'SELECT name, is_aggregate, case_insensitive, alias_to, categories FROM system.functions',
      { format: 'JSONEachRow' },
    )
  )
    .text()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as CatalogRow);
  const combinators = (
    await connection.queryAsync('SELECT name FROM system.aggregate_function_combinators', {
      format: 'TabSeparatedRaw',
    })
  )
    .text()
    .split('\n')
    .filter(Boolean);
  return functionCatalog(rows, combinators);
}

export class Executor {
  readonly #dataDir: string;
  readonly #slots: Slots;
  readonly #catalog: FunctionCatalog;
  /** Running queries: their connection, and when they finish. */
  readonly #open = new Map<Session, Promise<void>>();
  readonly #allowed = new Set<string>();
  /** Where INSERT data waits for the engine to read it (owner only; removed at close). */
  readonly #spool = mkdtempSync(join(tmpdir(), 'tally-warehouse-http-'));
  /** The spool file the policy sees: every spool file's name has this shape, so the parse is the same. */
  readonly #spoolPlaceholder = join(this.#spool, '00000000-0000-0000-0000-000000000000');
  /** This interface's queries' markers start with it (several interfaces may share a process). */
  readonly #markerPrefix = `tally-http:${randomUUID()}:`;
  #closing = false;

  constructor(options: ExecutorOptions) {
    this.#dataDir = options.dataDir;
    this.#slots = new Slots(options.maxConcurrent, options.maxQueued);
    this.#catalog = options.catalog;
  }

  /**
   * Runs the plan's statement once the policy allowed it. When `signal` aborts (the client went away)
   * the query is ended in the engine (KILL QUERY), whether it waits for a slot, runs or streams.
   */
  async run(plan: QueryPlan, sessions: SessionRegistry, signal?: AbortSignal): Promise<QueryRun> {
    guard(plan);
    if (this.#closing) throw new HttpInterfaceError('ABORTED', 'The server is shutting down');
    // KILL QUERY takes no slot: it must get through when every slot is held by what it ends (the
    // policy still checks that it is one, and who may run it).
    const kill = plan.statement.kind === 'KILL';
    const release = kill ? () => {} : await this.#slots.take(plan.user.readonly === 0, signal);
    const started = process.hrtime.bigint();
    const connection = new Session(this.#dataDir);
    const marker = `${this.#markerPrefix}${randomUUID()}`;
    let settle = () => {};
    const done = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.#open.set(connection, done);
    let finished = false;
    const abandon = () => {
      this.#kill(`Settings['log_comment'] = ${quote(marker)}`);
    };
    signal?.addEventListener('abort', abandon, { once: true });
    const finish = () => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', abandon);
      this.#open.delete(connection);
      connection.close();
      settle();
      release();
    };
    try {
      await this.#prepare(connection, plan, marker);
      const { statement } = plan;
      const check = statement.data ? insertFrom(statement, this.#spoolPlaceholder) : statement.sql;
      await this.#inspect(connection, plan, check, kill);
      signal?.throwIfAborted();
      const run = await this.#execute(connection, plan, started, finish);
      const { session } = plan;
      if (session && (statement.kind === 'SET' || statement.kind === 'USE'))
        sessions.record(session, statement.sql);
      return run;
    } catch (error) {
      finish();
      throw error;
    }
  }

  /**
   * Asks the engine, on the connection the statement will run on, for its canonical text and its tree,
   * and refuses what the user may not run (statement-policy.ts). Allowed texts are remembered per user.
   */
  async #inspect(connection: Session, plan: QueryPlan, check: string, kill: boolean): Promise<void> {
    const key = `${plan.user.name}\n${check}`;
    if (this.#allowed.has(key)) return;
    // A writer may have set result limits, `limit` or output settings on this connection: they must not
    // shape the engine's answers here (a read-only user cannot have changed any).
    const own = plan.readonly === 0 ? ` SETTINGS ${INSPECTION_SETTINGS}` : '';
    const ask = async (sql: string) =>
      (await connection.queryAsync(`${sql}${own}`, { format: 'TabSeparatedRaw' })).text();
    // The statement reaches formatQuery as a string literal (escaped as such: the engine reads back
    // exactly these bytes), never as text of the query that carries it. Not as a query parameter: a
    // parameter's value is read once more as escaped text, so `\'` would reach it as `'`.
    const canonical = (
      await ask(`SELECT formatQuery(${quote(check)})`).catch((error: unknown) => {
        throw statementError(error);
      })
    ).replace(/\n$/, '');
    const tree = parseAstDump(await ask(`EXPLAIN AST ${canonical}`));
    const subject = {
      user: plan.user.name,
      limits: limitNames(plan.user),
      readonly: plan.readonly !== 0,
      spoolFile: plan.statement.data ? this.#spoolPlaceholder : undefined,
    };
    checkStatement(this.#catalog, subject, tree, canonical);
    if (kill && tree?.type !== 'KillQueryQuery') {
      throw new HttpInterfaceError('SYNTAX_ERROR', 'A statement that starts with KILL must be a KILL QUERY');
    }
    if (this.#allowed.size >= ALLOWED_CACHE_SIZE)
      this.#allowed.delete(this.#allowed.values().next().value as string);
    this.#allowed.add(key);
  }

  /** Ends the running queries the condition (over system.processes) selects; never throws. */
  #kill(condition: string): Promise<void> {
    const connection = new Session(this.#dataDir);
    return connection
      .queryAsync(`KILL QUERY WHERE ${condition} ASYNC`, { format: 'TabSeparated' })
      .then(
        () => {},
        () => {},
      )
      .finally(() => connection.close());
  }

  async #prepare(connection: Session, plan: QueryPlan, marker: string): Promise<void> {
    // chDB takes several statements in one call: each round trip to its thread costs ~1 ms, so the
    // fixed part is one call and the request's own part another (the session's statements go between).
    const run = (statements: string[]) =>
      statements.length ? connection.queryAsync(statements.join(';\n'), { format: 'TabSeparated' }) : null;
    // chDB starts a connection as clickhouse-local does; the first SET puts back a server's defaults,
    // then the user's limits, the marker KILL QUERY finds the query by, and INSERT … VALUES data read as
    // literals only (the Values format would otherwise evaluate expressions in the data, file() included).
    const fixed = [
      ...SERVER_DEFAULTS.map(([name, value]) => `${name} = ${value}`),
      ...limitSettings(plan.user.limits).map(([name, value]) => `${name} = ${value}`),
      `log_comment = ${quote(marker)}`,
      'input_format_values_interpret_expressions = 0',
      'input_format_values_deduce_templates_of_expressions = 0',
    ];
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
        const inserted = await connection.queryAsync(insertFrom(statement, file), { format: 'TabSeparated' });
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

  /**
   * Ends the queries still running (the server stopped taking requests): KILL QUERY, a bounded wait for
   * them to stop, then their connections closed. Closing a connection under a running query does not stop
   * the query (it holds a thread of libuv's pool, and the process's exit waited for it).
   */
  async close(waitMs = 5000): Promise<void> {
    this.#closing = true;
    if (this.#open.size) {
      await this.#kill(`Settings['log_comment'] LIKE ${quote(`${this.#markerPrefix}%`)}`);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(this.#open.values()),
        new Promise((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]);
      clearTimeout(timer);
    }
    for (const connection of this.#open.keys()) connection.close();
    this.#open.clear();
    rmSync(this.#spool, { recursive: true, force: true });
  }
}
