// The HTTP interface's statement policy against the attacks that found it wanting (issue 26): over real
// HTTP, on real chDB, as the read-only analyst and as the writer. Nothing an attack reads may reach an
// answer (a canary file's contents are looked for in every body), nothing it writes may appear on disk,
// nothing it fetches may reach a listening probe. What users may still do keeps working. Then the limits:
// a query over its memory or time is stopped, an abandoned query is ended in the engine, a slot is kept
// for the writer, and a SIGTERM ends what runs. Last, a grammar-aware fuzz test of the policy.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAstDump } from '@tally/warehouse';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseHttpInterface, serveClickHouseHttp } from './server.ts';
import { tokens } from './statement.ts';
import { settingsNamed } from './statement-policy.ts';

const root = mkdtempSync(join(tmpdir(), 'tally-policy-'));
const dataDir = join(root, 'warehouse');
// A stand-in for the files an attacker wants (warehouse-users.json, tokens.json, /etc/shadow).
const secret = `canary-${randomBytes(12).toString('hex')}`;
const secretFile = join(root, 'warehouse-users.json');
writeFileSync(secretFile, `{"writer":{"password":"${secret}"}}\n`, { mode: 0o600 });
const target = (name: string) => join(root, 'written', name);
mkdirSync(join(root, 'written'));

const users = [
  { name: 'writer', password: 'w', readonly: 0 as const, limits: { maxExecutionTimeS: 60 } },
  {
    name: 'analyst',
    password: 'a',
    readonly: 1 as const,
    limits: { maxExecutionTimeS: 2, maxMemoryBytes: 200 * 1024 * 1024, maxResultBytes: 50 * 1024 * 1024 },
  },
];
const [writer, analyst] = users as [(typeof users)[0], (typeof users)[1]];
type User = (typeof users)[number];

let http: ClickHouseHttpInterface;
// Counts the requests url() and friends would make to a service on this machine.
let probe: Server;
let probeHits = 0;
let probeUrl = '';

beforeAll(async () => {
  http = await serveClickHouseHttp({ dataDir, users, database: 'policy', maxConcurrentQueries: 3 });
  probe = createServer((_req, res) => {
    probeHits++;
    res.end(secret);
  });
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await http?.close();
  await new Promise((resolve) => probe?.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

async function post(sql: string, user: User = writer, params: Record<string, string> = {}) {
  const url = new URL(http.url);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  const response = await fetch(url, {
    method: 'POST',
    body: sql,
    headers: { authorization: `Basic ${Buffer.from(`${user.name}:${user.password}`).toString('base64')}` },
  });
  return {
    status: response.status,
    code: response.headers.get('x-clickhouse-exception-code'),
    body: await response.text(),
  };
}

async function ok(sql: string, user: User = writer, params: Record<string, string> = {}) {
  const response = await post(sql, user, params);
  expect(response.status, `${sql}: ${response.body}`).toBe(200);
  return response.body;
}

const q = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

describe('what reaches the host is refused, whatever the text looks like', () => {
  beforeAll(async () => {
    await ok('CREATE TABLE guarded (s String) ENGINE = MergeTree ORDER BY s');
  });

  // [statement, users it is tried as]: every one must be refused, for every user given.
  const attacks: [string, User[]][] = [
    // The finding: a heredoc the old tokenizer did not know hid the call.
    [`SELECT $$'$$ AS a, file(${q(secretFile)}) AS b --'`, [analyst, writer]],
    [`SELECT $tag$'$tag$ AS a, file(${q(secretFile)}) AS b --'`, [analyst, writer]],
    [`SELECT $$/*$$ AS a, file(${q(secretFile)}) AS b -- */`, [analyst, writer]],
    [`SELECT file(${q(secretFile)})`, [analyst, writer]],
    [`SELECT FILE(${q(secretFile)})`, [analyst, writer]],
    [`SELECT \`file\`(${q(secretFile)})`, [analyst, writer]],
    [`SELECT * FROM file(${q(secretFile)}, 'LineAsString')`, [analyst, writer]],
    [`SELECT * FROM (SELECT * FROM view(SELECT file(${q(secretFile)})))`, [analyst, writer]],
    [`WITH (SELECT file(${q(secretFile)})) AS x SELECT x`, [analyst, writer]],
    [`SELECT 1 UNION ALL SELECT length(file(${q(secretFile)}))`, [analyst, writer]],
    [`SELECT * FROM url(${q(probeUrl)}, 'LineAsString')`, [analyst, writer]],
    [`SELECT * FROM executable('cat ${secretFile}', 'LineAsString', 's String')`, [analyst, writer]],
    [`SELECT * FROM filesystem(${q(root)})`, [analyst, writer]],
    [`SELECT getServerSetting('path')`, [analyst, writer]],
    [`SELECT catboostEvaluate(${q(secretFile)}, 1)`, [analyst, writer]],
    [`SELECT aiGenerate('x')`, [analyst, writer]],
    [`SELECT 1 INTO OUTFILE ${q(target('outfile'))}`, [analyst, writer]],
    [`SHOW TABLES INTO OUTFILE ${q(target('show'))}`, [analyst, writer]],
    [`DESCRIBE guarded INTO OUTFILE ${q(target('describe'))}`, [analyst, writer]],
    [`INSERT INTO FUNCTION file(${q(target('insert-function'))}, 'TSV') SELECT 1`, [writer]],
    [`INSERT INTO guarded FROM INFILE ${q(secretFile)} FORMAT LineAsString`, [writer]],
    [`CREATE TABLE f (s String) ENGINE = File(LineAsString, ${q(secretFile)})`, [writer]],
    [`CREATE TABLE u (s String) ENGINE = URL(${q(probeUrl)}, LineAsString)`, [writer]],
    [`CREATE TABLE r AS remote('127.0.0.1', system.one)`, [writer]],
    [`CREATE DATABASE fs ENGINE = Filesystem(${q(root)})`, [writer]],
    [
      `CREATE DICTIONARY d (k UInt64, v String) PRIMARY KEY k SOURCE(FILE(path ${q(secretFile)} format 'TSV')) LAYOUT(FLAT()) LIFETIME(0)`,
      [writer],
    ],
    [
      `CREATE TABLE on_disk (a UInt8) ENGINE = MergeTree ORDER BY a SETTINGS disk = disk(type = local, path = ${q(`${target('disk')}/`)})`,
      [writer],
    ],
    ["ALTER TABLE guarded MODIFY SETTING storage_policy = 'default'", [writer]],
    [`BACKUP TABLE guarded TO File(${q(target('backup'))})`, [writer]],
    [`ATTACH TABLE att FROM ${q(root)} (s String) ENGINE = MergeTree ORDER BY s`, [writer]],
    ['SYSTEM FLUSH LOGS', [analyst, writer]],
    ['CREATE FUNCTION f AS x -> x', [writer]],
    [`SELECT 1 SETTINGS format_template_row = ${q(secretFile)} FORMAT Template`, [writer]],
    [`SELECT 1 SETTINGS input_format_record_errors_file_path = ${q(target('errors'))}`, [writer]],
    ["SET dialect = 'kusto'", [writer]],
    ['SELECT 1 SETTINGS max_memory_usage = 0', [analyst]],
    ['KILL QUERY WHERE 1 ASYNC', [analyst]],
    ['INSERT INTO guarded VALUES', [analyst]],
    // Settings that would cut the engine's own answers short (the tree it gives of the statement).
    [`SELECT 1, file(${q(secretFile)}) SETTINGS limit = 1`, [writer]],
    [
      `SELECT 1, file(${q(secretFile)}) SETTINGS max_result_rows = 1, result_overflow_mode = 'break'`,
      [writer],
    ],
    // Several statements behind a heredoc: the engine would run both.
    [`SET max_threads = $$'$$; SELECT file(${q(secretFile)}) --'`, [analyst, writer]],
  ];

  it.each(
    attacks.flatMap(([sql, who]) => who.map((user) => [user.name, sql, user] as const)),
  )('refuses as %s: %s', async (_name, sql, user) => {
    const response = await post(sql, user);
    expect(response.status, response.body).not.toBe(200);
    expect(response.code).toMatch(/^\d+$/);
    expect(response.body).not.toContain(secret);
  });

  it('lets a user lower its own limits, never lift them', async () => {
    expect(await ok('SELECT 1 SETTINGS max_execution_time = 5')).toBe('1\n');
    expect(await ok('SELECT 1', writer, { max_execution_time: '30' })).toBe('1\n');
    for (const value of ['0', '61', '1e9']) {
      expect((await post(`SELECT 1 SETTINGS max_execution_time = ${value}`)).code, value).toBe('497');
    }
  });

  it('refuses settings that reach the host or the limits, given in the URL', async () => {
    for (const [name, value] of [
      ['input_format_record_errors_file_path', target('url-setting')],
      ['format_schema', secretFile],
      ['dialect', 'kusto'],
      ['max_execution_time', '0'],
      ['readonly', '0'],
    ] as const) {
      const response = await post('SELECT 1', writer, { [name]: value });
      expect(response.code, `${name}: ${response.body}`).toBe('497');
    }
  });

  it('evaluates no expression in INSERT … VALUES data: the data is literals only', async () => {
    const response = await post(`INSERT INTO guarded VALUES (file(${q(secretFile)}))`);
    expect(response.status).not.toBe(200);
    expect(response.body).not.toContain(secret);
    expect(await ok("INSERT INTO guarded VALUES ('plain'), ('two')")).toBe('');
    expect(await ok('SELECT s FROM guarded ORDER BY s')).toBe('plain\ntwo\n');
  });

  it('left nothing on disk and made no request to the probe', () => {
    expect(readdirSync(join(root, 'written'))).toEqual([]);
    expect(probeHits).toBe(0);
  });
});

describe('what users may do keeps working', () => {
  it('runs the read-only analyst’s queries: aggregates with combinators, lambdas, windows, SHOW, DESCRIBE', async () => {
    await ok('CREATE TABLE facts (k UInt8, v Float64, s String) ENGINE = MergeTree ORDER BY k');
    await ok("INSERT INTO facts VALUES (1, 2.5, 'a'), (2, 3.5, 'b'), (2, 1, 'c')");
    expect(
      await ok(
        'SELECT k, sumIf(v, v > 1), uniqExactStateOrNull(s) IS NOT NULL, arrayMap(x -> x * 2, [k]), quantile(0.5)(v), ' +
          "count() OVER (), toTypeName(k), $$it's$$ FROM facts GROUP BY k ORDER BY k FORMAT TSVRaw",
        analyst,
      ),
    ).toBe("1\t2.5\t1\t[2]\t2.5\t2\tUInt8\tit's\n2\t3.5\t1\t[4]\t2.25\t2\tUInt8\tit's\n");
    expect(await ok('SHOW TABLES', analyst)).toContain('facts');
    expect(await ok('DESCRIBE facts', analyst)).toContain('UInt8');
    expect(await ok('EXPLAIN SELECT 1', analyst)).toContain('ReadFromSystemOne');
    expect(await ok('EXISTS TABLE facts', analyst)).toBe('1\n');
    expect(await ok('SELECT sum(number) FROM numbers(10)', analyst)).toBe('45\n');
    expect(await ok("SELECT name FROM system.tables WHERE name = 'facts'", analyst)).toBe('facts\n');
    expect(
      await ok("SELECT CASE WHEN 1 THEN 'x' END, 1 IN (1, 2), INTERVAL 1 DAY, version() != ''", analyst),
    ).toBe('x\t1\t1\t1\n');
  });

  it('runs the writer’s DDL with codecs, indexes, TTL and table settings, and KILL QUERY', async () => {
    await ok(
      'CREATE TABLE ddl (at DateTime64(3) CODEC(Delta, ZSTD(1)), s LowCardinality(String), INDEX i s TYPE bloom_filter(0.01) GRANULARITY 4) ' +
        'ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(at) ORDER BY (toDate(at), s) TTL toDateTime(at) + INTERVAL 10 YEAR ' +
        'SETTINGS index_granularity = 8192',
    );
    await ok('ALTER TABLE ddl ADD COLUMN n UInt32 DEFAULT 0');
    expect(await ok("KILL QUERY WHERE query_id = 'none' ASYNC")).toBe('');
    await ok('DROP TABLE ddl');
  });
});

describe('limits, abandoned queries and the writer’s slot', () => {
  const heavy = 'SELECT count() FROM numbers(100000000000) WHERE NOT ignore(sipHash64(number))';

  it('stops an analyst query over its memory or its time, and the analyst cannot lift them', async () => {
    const memory = await post('SELECT length(groupArray(number)) FROM numbers(300000000)', analyst);
    expect(memory.code, memory.body).toBe('241');
    const time = await post(heavy, analyst);
    expect(time.code, time.body).toBe('159');
    const lifted = await post(heavy, analyst, { max_execution_time: '0' });
    expect(lifted.code).not.toBe(null);
    expect(lifted.status).not.toBe(200);
  });

  /** Queries of this interface the engine is running, as the writer sees them. */
  const running = async (marker: string) =>
    Number(
      await ok(
        `SELECT count() FROM system.processes WHERE query LIKE ${q(`%${marker}%`)} AND query NOT LIKE '%system.processes%'`,
      ),
    );

  async function waitFor(check: () => Promise<boolean>, what: string, ms = 30_000) {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Sends a query and drops the connection once the engine runs it. */
  async function abandon(sql: string, marker: string) {
    const url = new URL(http.url);
    const req = httpRequest(url, {
      method: 'POST',
      auth: `${writer.name}:${writer.password}`,
      headers: { 'content-length': Buffer.byteLength(sql) },
    });
    req.on('error', () => {});
    req.end(sql);
    await waitFor(async () => (await running(marker)) > 0, 'the query to start');
    req.destroy();
  }

  it('ends a query in the engine when its client goes away, and keeps a slot for the writer', async () => {
    const markers = Array.from({ length: 4 }, (_, i) => `abandoned_${i}_${randomBytes(4).toString('hex')}`);
    // Three slots, one kept for the writer: two read-only queries hold the others, the writer still gets in.
    const readers = markers
      .slice(0, 2)
      .map((marker) => post(`${heavy} AND '${marker}' != ''`, { ...analyst }));
    await waitFor(
      async () => (await running(markers[0] as string)) + (await running(markers[1] as string)) === 2,
      'two readers',
    );
    expect(await ok('SELECT 1')).toBe('1\n');
    await Promise.all(readers);
    for (const marker of markers.slice(2)) {
      await abandon(`${heavy} AND '${marker}' != ''`, marker);
      await waitFor(async () => (await running(marker)) === 0, `the abandoned query ${marker} to end`);
    }
  });

  it('ends running queries on SIGTERM and exits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-policy-sigterm-'));
    const script = fileURLToPath(new URL('../scripts/serve-clickhouse-http.ts', import.meta.url));
    const child: ChildProcess = spawn(
      process.execPath,
      ['--conditions=@tally/source', '--import', 'tsx', script, dir, '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, WAREHOUSE_WRITER_MAX_EXECUTION_TIME_S: '0' },
      },
    );
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        const onData = (data: Buffer) => {
          output += data;
          const match = /CLICKHOUSE_URL=(\S+)/.exec(output);
          if (match?.[1]) resolve(match[1]);
        };
        child.stdout?.on('data', onData);
        child.stderr?.on('data', onData);
        child.once('exit', () => reject(new Error(output)));
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const query = fetch(url, { method: 'POST', body: heavy }).catch(() => null);
      const deadline = Date.now() + 30_000;
      while (true) {
        const seen = await fetch(url, {
          method: 'POST',
          body: "SELECT count() FROM system.processes WHERE query LIKE '%sipHash64%' AND query NOT LIKE '%system.processes%'",
        }).then((r) => r.text());
        if (seen.trim() === '1') break;
        if (Date.now() > deadline) throw new Error('the heavy query did not start');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      await query;
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('parseAstDump and settingsNamed', () => {
  it('reads the indented dump into a tree, and refuses a dump with two roots', () => {
    const tree = parseAstDump(
      'SelectWithUnionQuery (children 1)\n ExpressionList (children 1)\n  Function file (alias b) (children 1)\n   ExpressionList\n',
    );
    expect(tree?.children[0]?.children[0]).toMatchObject({ type: 'Function', name: 'file' });
    expect(parseAstDump('Set\nSet\n')).toBeNull();
    // cut short (a limit on the answer): a node has fewer children than it says
    expect(
      parseAstDump('SelectWithUnionQuery (children 2)\n ExpressionList (children 1)\n  Literal UInt64_1\n'),
    ).toBeNull();
  });

  it('names every setting of SET, SETTINGS clauses at any depth, table and column settings', () => {
    const named = (text: string) => settingsNamed([...tokens(Buffer.from(text))]);
    expect(named("SET a = 1, b = 'x', c = -2")).toEqual([
      ['a', '1'],
      ['b', null],
      ['c', null],
    ]);
    expect(
      named('SELECT * FROM (SELECT 1 SETTINGS x = 1) SETTINGS y = 2 FORMAT JSON').map(([n]) => n),
    ).toEqual(['x', 'y']);
    expect(
      named(
        "CREATE TABLE t (s String SETTINGS (m = 1)) ENGINE = MergeTree ORDER BY s SETTINGS d = disk(type = local, path = '/x'), g = 2",
      ),
    ).toEqual([
      ['m', '1'],
      ['d', null],
      ['g', '2'],
    ]);
    expect(named("ALTER TABLE t\n    (MODIFY SETTING `disk` = 'x', i = 1)").map(([n]) => n)).toEqual([
      'disk',
      'i',
    ]);
  });
});

// Statements built from the pieces that fool a tokenizer: string literals of both kinds, heredocs with and
// without a tag, backquoted and double-quoted identifiers, line and nested block comments, each holding
// quotes, dollars, comment markers and a call to file(). A call of file() outside every literal and comment
// is "live". The policy must refuse every statement with a live call, and no statement it lets through may
// ever answer the canary's contents. Statements without a live call must run.
describe('fuzz: the policy against statements built around literals, comments and heredocs', () => {
  const noise = fc.constantFrom(
    "'",
    '"',
    '`',
    '$',
    '$$',
    '$t$',
    '--',
    '/*',
    '*/',
    '#',
    ';',
    '\\',
    '\n',
    'x',
    ' ',
    'file(',
  );
  const text = fc.array(noise, { maxLength: 6 }).map((parts) => parts.join(''));
  const call = `length(file(${q(secretFile)}))`;
  // Each piece: [sql, live file() call in it].
  const piece: fc.Arbitrary<[string, boolean]> = fc.oneof(
    text.map((t): [string, boolean] => [q(`${t}${call}${t}`), false]),
    // (a heredoc's text may hold anything but its delimiter, and may not end with a `$` that the delimiter
    // would take for its own)
    text
      .filter((t) => !t.includes('$$') && !t.endsWith('$'))
      .map((t): [string, boolean] => [`$$${t}${call}${t}$$`, false]),
    text
      .filter((t) => !t.includes('$q$') && !t.endsWith('$'))
      .map((t): [string, boolean] => [`$q$${t}${call}${t}$q$`, false]),
    fc.constant<[string, boolean]>([call, true]),
    fc.constant<[string, boolean]>(["length(lower('a'))", false]),
    fc.integer({ min: 0, max: 99 }).map((n): [string, boolean] => [String(n), false]),
  );
  const gap: fc.Arbitrary<string> = fc.oneof(
    fc.constant(' '),
    text.filter((t) => !t.includes('\n')).map((t) => ` -- ${t}${call}\n`),
    text.filter((t) => !t.includes('*/') && !t.includes('/*')).map((t) => ` /* ${t}${call} */ `),
  );
  const statement = fc
    .array(fc.tuple(gap, piece, fc.constantFrom('a', 'b', 'c')), { minLength: 1, maxLength: 4 })
    .map((items) => {
      const live = items.some(([, [, isLive]]) => isLive);
      const columns = items.map(([g, [sql], alias], i) => `${g}${sql} AS ${alias}${i}`);
      return { sql: `SELECT ${columns.join(',')} FROM numbers(1)`, live };
    });

  it('refuses every live call, never answers the canary, and runs the rest', async () => {
    await fc.assert(
      fc.asyncProperty(statement, fc.constantFrom(writer, analyst), async ({ sql, live }, user) => {
        const response = await post(sql, user);
        expect(response.body).not.toContain(secret);
        if (live) expect(response.code, sql).toBe('497');
        else expect(response.status, `${sql}\n${response.body}`).toBe(200);
      }),
      { numRuns: 150 },
    );
    expect(existsSync(join(root, 'written'))).toBe(true);
  });
});
