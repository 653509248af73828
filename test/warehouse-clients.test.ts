// The warehouse's ClickHouse HTTP interface (chDB underneath, served as its own process on 127.0.0.1) with
// the clients analysts use: clickhouse-connect (Python, from PyPI through infra/clickhouse-connect, running
// test/support/clickhouse_connect_check.py) and @clickhouse/client, both with compression on. Inserts of
// every column type the warehouse's tables use read back equal; binary formats both ways; each request's
// settings, parameters and database stay its own (also concurrently), sessions keep theirs; a slow query
// does not hold another client's SELECT 1; the read-only analyst cannot write.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import {
  type ClickHouseClient,
  type ClickHouseClientConfigOptions,
  ClickHouseLogLevel,
  type ClickHouseSettings,
  createClient,
} from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROOT } from './support/processes.ts';
import { kill, startWarehouseServer } from './support/warehouse-server.ts';

const run = promisify(execFile);
const ANALYST_PASSWORD = randomBytes(12).toString('hex');
const dataDir = mkdtempSync(join(tmpdir(), 'tally-warehouse-clients-'));
let server: Awaited<ReturnType<typeof startWarehouseServer>>;
const clients: ClickHouseClient[] = [];

function client(options: ClickHouseClientConfigOptions = {}): ClickHouseClient {
  const made = createClient({
    url: server.url,
    compression: { request: true, response: true },
    request_timeout: 30_000,
    // The refusals below are expected: the client would log each of them too.
    log: { level: ClickHouseLogLevel.OFF },
    ...options,
  });
  clients.push(made);
  return made;
}
const analyst = (options: ClickHouseClientConfigOptions = {}) =>
  // A ClickHouse user with readonly=1 may not change settings, enable_http_compression included: response
  // compression off, as @clickhouse/client's read-only example does.
  client({ username: 'analyst', password: ANALYST_PASSWORD, compression: { response: false }, ...options });

const rows = async <T>(c: ClickHouseClient, query: string, extra: object = {}) =>
  (await c.query({ query, format: 'JSONEachRow', ...extra })).json<T>();

/** Resolves once the engine runs a query whose text holds `marker` (system.processes, asked by another client). */
const running = (marker: string) => {
  const watcher = client();
  return vi.waitFor(
    async () =>
      expect(
        await rows(
          watcher,
          `SELECT 1 FROM system.processes WHERE query LIKE '%${marker}%' AND query NOT LIKE '%system.processes%'`,
        ),
      ).toHaveLength(1),
    { timeout: 10_000, interval: 20 },
  );
};

const codeOf = (error: unknown) => String((error as { code?: string }).code);

beforeAll(async () => {
  server = await startWarehouseServer(dataDir, 0, { analystPassword: ANALYST_PASSWORD });
});
afterAll(async () => {
  for (const c of clients) await c.close();
  if (server) await kill(server.process, 'SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('clickhouse-connect (PyPI)', () => {
  it('queries, binds parameters, applies settings per query, inserts every warehouse column type (lz4, zstd, gzip) and reads it back equal; sessions; analyst refused; compressed blocks', async () => {
    let python: string;
    try {
      const { stdout } = await run('bash', [`${ROOT}infra/clickhouse-connect/install.sh`], {
        timeout: 600_000,
      });
      python = stdout.trim().split('\n').at(-1) as string;
    } catch (error) {
      throw new Error(
        `infra/clickhouse-connect/install.sh failed (${(error as Error).message}). It needs python3 with venv ` +
          '(Debian: python3-venv) and PyPI; run it yourself to see why.',
      );
    }
    const result = await run(
      python,
      [`${ROOT}test/support/clickhouse_connect_check.py`, server.url, ANALYST_PASSWORD],
      {
        timeout: 120_000,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`clickhouse-connect check failed:\n${error.stdout}\n${error.stderr}`);
    });
    const checks = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { check: string; ok: boolean });
    expect(checks.every((c) => c.ok)).toBe(true);
    expect(checks.map((c) => c.check)).toEqual([
      "connects with default compression and reads the server's version and time zone",
      'query with server-side parameters',
      'parameters too long for the URL travel as multipart/form-data',
      'settings per query last for that query only',
      'insert (Native, lz4) of every column type the warehouse uses, read back equal',
      'insert (Native, zstd) of every column type the warehouse uses, read back equal',
      'insert (Native, gzip) of every column type the warehouse uses, read back equal',
      'insert (Native, uncompressed) of every column type the warehouse uses, read back equal',
      'a SET in one session breaks only that session; another client is unaffected',
      'the analyst user reads but cannot INSERT, ALTER, DROP or CREATE',
      "ClickHouse's compressed blocks: decompress=1 body and compress=1 result, CityHash128 checksums",
    ]);
  }, 720_000);
});

describe('@clickhouse/client', () => {
  const database = `clients_${randomUUID().replace(/-/g, '')}`;
  let writer: ClickHouseClient;
  beforeAll(async () => {
    await client().command({ query: `CREATE DATABASE ${database}` });
    writer = client({ database });
  });

  it('answers ping and /replicas_status, and runs in database tally when none is named', async () => {
    expect((await client().ping()).success).toBe(true);
    for (const path of ['/ping', '/replicas_status']) {
      const response = await fetch(`${server.url}${path}`);
      expect([response.status, await response.text()]).toEqual([200, 'Ok.\n']);
    }
    expect(await rows(client(), 'SELECT currentDatabase() AS db')).toEqual([{ db: 'tally' }]);
    expect(await rows(writer, 'SELECT currentDatabase() AS db')).toEqual([{ db: database }]);
  });

  it('binds parameters and applies settings for one query only', async () => {
    const bound = await rows(writer, 'SELECT {s:String} AS s, {n:UInt64} AS n, {a:Array(String)} AS a', {
      query_params: { s: "it's\ta\\tab", n: '18446744073709551615', a: ['x', "y'z"] },
      clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    });
    expect(bound).toEqual([{ s: "it's\ta\\tab", n: '18446744073709551615', a: ['x', "y'z"] }]);
    const limited = await rows(writer, "SELECT getSetting('max_threads') AS t", {
      clickhouse_settings: { max_threads: 1 },
    });
    expect(limited).toEqual([{ t: 1 }]);
    expect(await rows(writer, "SELECT getSetting('max_threads') = 1 AS one")).toEqual([{ one: 0 }]);
  });

  it('inserts every column type the warehouse uses (compressed request) and reads them back equal', async () => {
    await writer.command({
      query: `CREATE TABLE typed (id UInt32, amount Decimal(38,6), at DateTime64(3,'UTC'), meta Map(String,String),
                currency LowCardinality(String), record_id UUID, tags Array(String), mrr Nullable(Decimal(38,6)),
                recurring Nullable(Bool), bot Bool, note String) ENGINE = MergeTree ORDER BY id`,
    });
    const values = [
      {
        id: 1,
        amount: '1.5',
        at: '2026-01-05 12:00:00.123',
        meta: { plan: 'pro', interval: 'monthly' },
        currency: 'USD',
        record_id: '0b3f6a1e-1111-4222-8333-444455556666',
        tags: ['a', 'b'],
        mrr: '-20.25',
        recurring: true,
        bot: false,
        note: 'héllo\n\t wörld',
      },
      {
        id: 2,
        amount: '-12345678901234.123456',
        at: '1999-12-31 23:59:59.999',
        meta: {},
        currency: '',
        record_id: '00000000-0000-0000-0000-000000000000',
        tags: [],
        mrr: null,
        recurring: null,
        bot: true,
        note: '',
      },
    ];
    const inserted = await writer.insert({ table: 'typed', values, format: 'JSONEachRow' });
    expect(inserted.summary?.written_rows).toBe('2');
    const back = await rows(writer, 'SELECT * FROM typed ORDER BY id', {
      clickhouse_settings: {
        output_format_json_quote_decimals: 1,
        output_format_json_quote_64bit_integers: 1,
      },
    });
    // Decimals exactly as inserted (quoted, so that no digit is lost to a double).
    expect(back).toEqual(values);
  });

  it('passes Native, RowBinary, Parquet and Arrow through as bytes in both directions', async () => {
    await writer.command({
      query:
        "CREATE TABLE bin (a UInt64, s String, t DateTime64(3,'UTC'), m Map(String,String)) ENGINE = MergeTree ORDER BY a",
    });
    await writer.command({
      query:
        "INSERT INTO bin SELECT number, concat('r', toString(number), char(0)), toDateTime64(number, 3, 'UTC'), map('k', toString(number)) FROM numbers(1000)",
    });
    const expected = await rows(writer, 'SELECT * FROM bin ORDER BY a');
    for (const format of [
      'Native',
      'RowBinaryWithNamesAndTypes',
      'Parquet',
      'Arrow',
      'ArrowStream',
    ] as const) {
      const out = await writer.exec({ query: `SELECT * FROM bin ORDER BY a FORMAT ${format}` });
      const chunks: Buffer[] = [];
      for await (const chunk of out.stream) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      await writer.command({ query: `CREATE TABLE bin_${format} AS bin` });
      await writer.exec({
        query: `INSERT INTO bin_${format} FORMAT ${format}`,
        values: Readable.from([bytes]),
      });
      expect(await rows(writer, `SELECT * FROM bin_${format} ORDER BY a`), format).toEqual(expected);
    }
    const raw = await fetch(`${server.url}/?query=${encodeURIComponent('SELECT 1 AS x FORMAT RowBinary')}`);
    expect([raw.headers.get('content-type'), Buffer.from(await raw.arrayBuffer()).toString('hex')]).toEqual([
      'application/octet-stream',
      '01',
    ]);
  });

  it("keeps a request's SET, parameter and USE out of the next request, also concurrently", async () => {
    await writer.command({ query: 'SET max_result_rows = 1' });
    await writer.command({ query: 'USE system' });
    await writer.query({ query: 'SELECT {x:String}', query_params: { x: 'leak' } });
    expect(await rows(writer, 'SELECT count() AS n FROM numbers(5)')).toEqual([{ n: 5 }]);
    expect(await rows(writer, 'SELECT currentDatabase() AS db')).toEqual([{ db: database }]);
    await expect(writer.query({ query: 'SELECT {x:String}' })).rejects.toMatchObject({ code: '456' });
    const results = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const own = client({ database: i % 2 ? database : 'system' });
        if (i % 3 === 0) await own.command({ query: 'SET max_result_rows = 1' });
        const [row] = await rows<{ x: string; db: string; n: number }>(
          own,
          "SELECT {x:String} AS x, currentDatabase() AS db, (SELECT count() FROM numbers(3)) AS n, getSetting('max_result_rows') AS m",
          { query_params: { x: `v${i}` }, clickhouse_settings: i % 4 === 0 ? { max_threads: 1 } : {} },
        );
        return row;
      }),
    );
    expect(results).toEqual(
      Array.from({ length: 30 }, (_, i) => ({ x: `v${i}`, db: i % 2 ? database : 'system', n: 3, m: 0 })),
    );
  });

  it('keeps SET and USE in a session (session_id), one query at a time, per user', async () => {
    const sessionId = randomUUID();
    const inSession = client({ database, session_id: sessionId });
    await inSession.command({ query: 'SET max_result_rows = 2' });
    await inSession.command({ query: 'USE system' });
    expect(
      await rows(inSession, "SELECT getSetting('max_result_rows') AS m, currentDatabase() AS db", {
        format: 'JSONEachRow',
      }),
    ).toEqual([
      { m: 2, db: database }, // the client names its database on every request; the request's database wins
    ]);
    const bare = client({ session_id: sessionId });
    expect(await rows(bare, 'SELECT currentDatabase() AS db')).toEqual([{ db: 'system' }]);
    expect(await rows(client(), "SELECT getSetting('max_result_rows') AS m")).toEqual([{ m: 0 }]);
    const slow = bare.command({ query: "SELECT sleep(1), 'session_holder'" });
    await running('session_holder');
    await expect(bare.command({ query: 'SELECT 1' })).rejects.toMatchObject({ code: '373' }); // SESSION_IS_LOCKED
    await slow;
    await expect(
      client({
        session_id: randomUUID(),
        clickhouse_settings: { session_check: 1 } as ClickHouseSettings,
      }).query({
        query: 'SELECT 1',
      }),
    ).rejects.toMatchObject({ code: '372' }); // SESSION_NOT_FOUND
    const other = analyst({ session_id: sessionId });
    expect(await rows(other, "SELECT getSetting('max_result_rows') AS m")).toEqual([{ m: 0 }]);
  });

  it("does not hold another client's SELECT 1 behind a slow query", async () => {
    const order: string[] = [];
    const slow = client()
      .query({ query: "SELECT sleep(3), 'slow_beside_select_1'", format: 'JSONEachRow' })
      .then((r) => r.json())
      .then(() => order.push('slow'));
    await running('slow_beside_select_1');
    await rows(client(), 'SELECT 1').then(() => order.push('select 1'));
    await slow;
    expect(order).toEqual(['select 1', 'slow']);
  });

  it('answers errors with ClickHouse status, code header and text', async () => {
    const response = await fetch(
      `${server.url}/?query=${encodeURIComponent('SELECT * FROM no_such_table')}`,
      {
        headers: { 'X-ClickHouse-Database': database, 'X-ClickHouse-Format': 'JSON' },
      },
    );
    expect(response.status).toBe(404);
    expect(response.headers.get('x-clickhouse-exception-code')).toBe('60');
    expect(await response.text()).toMatch(
      /^Code: 60\. DB::Exception: .*no_such_table.* \(UNKNOWN_TABLE\) \(version \d+\.\d+/,
    );
    const formatted = await fetch(
      `${server.url}/?query=${encodeURIComponent('SELECT 1 AS x')}&query_id=mine`,
      {
        headers: { 'X-ClickHouse-Format': 'JSONEachRow' },
      },
    );
    expect(formatted.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
    expect(formatted.headers.get('x-clickhouse-query-id')).toBe('mine');
    expect(JSON.parse(formatted.headers.get('x-clickhouse-summary') ?? '')).toMatchObject({
      written_rows: '0',
    });
    expect(await formatted.text()).toBe('{"x":1}\n');
  });

  it('lets the analyst read but not INSERT, ALTER, DROP, CREATE or change settings', async () => {
    await writer.command({ query: 'CREATE TABLE guarded (a UInt8) ENGINE = MergeTree ORDER BY a' });
    await writer.insert({ table: 'guarded', values: [{ a: 1 }], format: 'JSONEachRow' });
    const reader = analyst({ database });
    expect(await rows(reader, 'SELECT a FROM guarded')).toEqual([{ a: 1 }]);
    // One at a time: a request started early and refused before its turn would be an unhandled rejection.
    const refusals = [
      () => reader.insert({ table: 'guarded', values: [{ a: 2 }], format: 'JSONEachRow' }),
      () => reader.command({ query: 'ALTER TABLE guarded DELETE WHERE 1' }),
      () => reader.command({ query: 'DROP TABLE guarded' }),
      () => reader.command({ query: 'CREATE TABLE x (a UInt8) ENGINE = Memory' }),
      () => reader.command({ query: 'SET max_result_rows = 1' }),
      () => reader.query({ query: 'SELECT 1', clickhouse_settings: { max_threads: 1 } }),
    ];
    for (const refusal of refusals) await expect(refusal()).rejects.toSatisfy((e) => codeOf(e) === '164');
    await expect(reader.query({ query: "SELECT file('/etc/hostname')" })).rejects.toSatisfy(
      (e) => codeOf(e) === '497',
    );
    await expect(
      client({ username: 'analyst', password: 'wrong', compression: { response: false } }).query({
        query: 'SELECT 1',
      }),
    ).rejects.toSatisfy((e) => codeOf(e) === '516');
    // ClickHouse 26 lets a readonly=1 user change a few client-side settings, enable_http_compression among them.
    expect(
      await rows(analyst({ database, compression: { response: true } }), 'SELECT a FROM guarded'),
    ).toEqual([{ a: 1 }]);
    expect(await rows(writer, 'SELECT a FROM guarded')).toEqual([{ a: 1 }]);
  });
});
