// ClickHouse's HTTP interface over a chDB data directory that this process holds too, next to the embedded
// warehouse, as `npm start` runs it: what chDB allows, measured here (the protocol with real clients is in
// test/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { Session } from 'chdb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CODES } from './errors.ts';
import { STREAMABLE_FORMATS } from './executor.ts';
import { type ClickHouseHttpInterface, serveClickHouseHttp } from './server.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-chdb-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('HTTP interface over the data directory this process holds', () => {
  let http: ClickHouseHttpInterface;
  let warehouse: Warehouse;
  const users = [
    { name: 'writer', password: 'w', readonly: 0 as const },
    { name: 'analyst', password: 'a', readonly: 1 as const },
  ];
  beforeAll(async () => {
    warehouse = await openChdbWarehouse({ dataDir, database: 'http_neighbour' });
    http = await serveClickHouseHttp({ dataDir, users, database: 'http_default' });
  });
  afterAll(async () => {
    await http?.close();
    await warehouse?.close();
  });

  async function post(sql: string | Buffer, params: Record<string, string> = {}, user = users[0]) {
    const url = new URL(http.url);
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    const response = await fetch(url, {
      method: 'POST',
      body: sql,
      headers: {
        authorization: `Basic ${Buffer.from(`${user?.name}:${user?.password}`).toString('base64')}`,
      },
    });
    return {
      status: response.status,
      headers: response.headers,
      body: Buffer.from(await response.arrayBuffer()),
    };
  }
  const text = async (sql: string, params?: Record<string, string>, user?: (typeof users)[number]) => {
    const response = await post(sql, params, user);
    if (response.status !== 200) throw new Error(`${response.status} ${response.body}`);
    return response.body.toString();
  };

  it("raises the error codes chDB's engine names as this layer does (codes checked by name)", async () => {
    const names = Object.keys(CODES).map((name) => `'${name}'`);
    const rows = await warehouse.query<{ code: number; name: string }>(
      `SELECT number AS code, errorCodeToName(number) AS name FROM numbers(2000) WHERE name IN (${names.join(',')})`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, r.code]))).toEqual(CODES);
  });

  it('streams only formats whose chunks add up to the whole result (measured on chDB)', async () => {
    const session = new Session(dataDir);
    try {
      const sql = 'SELECT number, toString(number) AS s, [number] AS a FROM numbers(300000)';
      for (const format of STREAMABLE_FORMATS) {
        const chunks: Buffer[] = [];
        for await (const chunk of session.queryStream(sql, { format })) chunks.push(Buffer.from(chunk.raw()));
        const whole = Buffer.from((await session.queryAsync(sql, { format })).bytes());
        expect(chunks.length, format).toBeGreaterThan(1);
        expect(Buffer.concat(chunks).equals(whole), format).toBe(true);
      }
    } finally {
      session.close();
    }
  });

  it('passes binary formats through as bytes both ways: every column type the warehouse uses reads back equal', async () => {
    const columns =
      "id UInt32, amount Decimal(38,6), at DateTime64(3,'UTC'), meta Map(String,String), currency LowCardinality(String), " +
      'record_id UUID, tags Array(String), mrr Nullable(Decimal(38,6)), bot Bool, note String';
    await text(`CREATE TABLE source (${columns}) ENGINE = MergeTree ORDER BY id`);
    await text(
      `INSERT INTO source VALUES (1, 1.5, '2026-01-05 12:00:00.123', {'plan':'pro'}, 'USD', '0b3f6a1e-1111-4222-8333-444455556666', ['a','b'], -20.25, true, 'h\\0é\\n'),
       (2, -12345678901234.123456, '1999-12-31 23:59:59.999', {}, '', '00000000-0000-0000-0000-000000000000', [], NULL, false, '')`,
    );
    const expected = await text('SELECT * FROM source ORDER BY id FORMAT JSONEachRow');
    for (const format of [
      'Native',
      'RowBinary',
      'RowBinaryWithNamesAndTypes',
      'Parquet',
      'Arrow',
      'ArrowStream',
      'Avro',
    ]) {
      const out = await post(`SELECT * FROM source ORDER BY id FORMAT ${format}`);
      expect(out.status, format).toBe(200);
      expect(out.headers.get('x-clickhouse-format')).toBe(format);
      await text(`CREATE TABLE copy_${format} AS source`);
      const insert = await post(out.body, { query: `INSERT INTO copy_${format} FORMAT ${format}` });
      expect(insert.status, `${format}: ${insert.body}`).toBe(200);
      expect(JSON.parse(insert.headers.get('x-clickhouse-summary') ?? '{}').written_rows).toBe('2');
      expect(await text(`SELECT * FROM copy_${format} ORDER BY id FORMAT JSONEachRow`), format).toBe(
        expected,
      );
    }
  });

  it('refuses before running what chDB would store wrongly or what reaches the host, with ClickHouse codes', async () => {
    await text('CREATE TABLE guarded (a UInt8) ENGINE = MergeTree ORDER BY a');
    const refused = async (sql: string, code: number, user = users[0]) => {
      const response = await post(sql, {}, user);
      expect(response.headers.get('x-clickhouse-exception-code'), `${sql}: ${response.body}`).toBe(
        String(code),
      );
      expect(response.body.toString()).toMatch(new RegExp(`^Code: ${code}\\. DB::Exception: .* \\(version `));
    };
    await refused("INSERT INTO guarded SELECT * FROM input('a UInt8') FORMAT CSV\n1\n", 48);
    await refused("SELECT 1 INTO OUTFILE '/tmp/tally-http-outfile'", 358);
    // (with FORMAT, the rest is the data: this is a FROM INFILE before the data, which the engine refuses)
    await refused("INSERT INTO guarded FROM INFILE '/etc/hostname' FORMAT CSV", 62);
    await refused("INSERT INTO guarded FROM INFILE '/etc/hostname'", 358);
    await refused('SELECT 1; SELECT 2', 62);
    await refused("SELECT file('/etc/hostname')", 497, users[1]);
    await refused('KILL QUERY WHERE 1', 164, users[1]);
    const external = new FormData();
    external.set('query', 'SELECT * FROM ext');
    external.set('ext', new Blob(['1\n']), 'ext.tsv');
    const withFile = await fetch(`${http.url}/?ext_structure=a+UInt8`, {
      method: 'POST',
      body: external,
      headers: { authorization: `Basic ${Buffer.from('writer:w').toString('base64')}` },
    });
    expect(withFile.headers.get('x-clickhouse-exception-code')).toBe('48');
    expect(await text('SELECT count() FROM guarded')).toBe('0\n');
  });

  it("keeps each request's settings, parameters and database to itself, also concurrently and next to the warehouse", async () => {
    await text('CREATE DATABASE IF NOT EXISTS http_other');
    const isolated = Array.from({ length: 24 }, async (_, i) => {
      if (i % 3 === 0) {
        const own = await text("SELECT {x:String}, currentDatabase(), getSetting('max_result_rows')", {
          param_x: `v${i}`,
          database: 'http_other',
          max_result_rows: String(100 + i),
        });
        expect(own).toBe(`v${i}\thttp_other\t${100 + i}\n`);
      } else if (i % 3 === 1) {
        await text('SET max_result_rows = 1');
        await text('USE http_other');
      } else {
        expect(await text("SELECT currentDatabase(), getSetting('max_result_rows')")).toBe(
          'http_default\t0\n',
        );
        expect((await post('SELECT {x:String}')).headers.get('x-clickhouse-exception-code')).toBe('456');
        expect(await warehouse.query('SELECT currentDatabase() AS db')).toEqual([{ db: 'http_neighbour' }]);
      }
    });
    await Promise.all(isolated);
    expect(await text('SELECT count() FROM numbers(5)')).toBe('5\n');
  });

  it('answers a SELECT 1 while a slow query runs on another connection', async () => {
    const order: string[] = [];
    const slow = text("SELECT sleep(2), 'slow_on_another_connection'").then(() => order.push('slow'));
    // Once the engine runs it (system.processes, asked in this process):
    await vi.waitFor(
      async () =>
        expect(
          await warehouse.query(
            "SELECT 1 FROM system.processes WHERE query LIKE '%slow_on_another_connection%' AND query NOT LIKE '%system.processes%'",
          ),
        ).toHaveLength(1),
      { timeout: 10_000, interval: 20 },
    );
    await text('SELECT 1').then(() => order.push('fast'));
    await slow;
    expect(order).toEqual(['fast', 'slow']);
  });
});
