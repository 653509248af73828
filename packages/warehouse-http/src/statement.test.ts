// The statement scan: kind, FORMAT, INSERT data boundaries (binary data kept byte for byte), one
// statement only; keywords inside strings, heredocs or comments do not count.
import { describe, expect, it } from 'vitest';
import { scanStatement } from './statement.ts';

const scan = (text: string | Buffer) => scanStatement(Buffer.isBuffer(text) ? text : Buffer.from(text));

describe('scanStatement', () => {
  it('reads the kind and the FORMAT clause at the top level only', () => {
    expect(scan('SELECT 1')).toMatchObject({ kind: 'SELECT', format: null, data: null });
    expect(scan('(SELECT 1) FORMAT JSONEachRow')).toMatchObject({ kind: 'SELECT', format: 'JSONEachRow' });
    expect(scan('WITH 1 AS x SELECT x FORMAT `JSON`').format).toBe('JSON');
    expect(scan("SELECT 'FORMAT JSON' -- FORMAT CSV").format).toBeNull();
    expect(scan('SELECT format FROM t FORMAT Parquet').format).toBe('Parquet');
    expect(scan('SELECT * FROM (SELECT 1 FORMAT CSV)').format).toBeNull();
  });

  it('splits an INSERT at its data: after FORMAT <name> and one line break, or at VALUES', () => {
    const binary = Buffer.from([0x20, 0x0a, 0x00, 0xff, 0x3b]);
    const insert = scan(Buffer.concat([Buffer.from('INSERT INTO t FORMAT RowBinary\n'), binary]));
    expect(insert).toMatchObject({
      kind: 'INSERT',
      sql: 'INSERT INTO t FORMAT RowBinary',
      format: 'RowBinary',
    });
    expect(insert.data?.equals(binary)).toBe(true);
    expect(scan('INSERT INTO t FORMAT CSV 1,2').data?.toString()).toBe('1,2');
    const values = scan("insert into t (a, b) values (1, 'x;y')");
    expect(values).toMatchObject({ sql: 'insert into t (a, b) values', format: 'Values' });
    expect(values.data?.toString()).toBe(" (1, 'x;y')");
    expect(values).toMatchObject({ insertHead: 'insert into t (a, b)', insertSettings: '' });
    const withSettings = scan('INSERT INTO db.t (a) SETTINGS async_insert = 0 FORMAT JSONEachRow\n{"a":1}');
    expect(withSettings).toMatchObject({
      insertHead: 'INSERT INTO db.t (a)',
      insertSettings: 'SETTINGS async_insert = 0',
      format: 'JSONEachRow',
    });
  });

  it('tells an INSERT … SELECT, with data after it (the input() form) or without', () => {
    expect(scan('INSERT INTO t SELECT * FROM u')).toMatchObject({ insertSelect: true, data: null });
    const input = scan("INSERT INTO t SELECT * FROM input('a UInt8') FORMAT CSV\n1\n");
    expect(input.insertSelect).toBe(true);
    expect(input.data?.toString()).toBe('1\n');
  });

  it('refuses several statements, accepts a trailing semicolon', () => {
    expect(() => scan('SELECT 1; DROP TABLE t')).toThrow(/Multi-statements are not allowed/);
    expect(scan('SELECT 1;').sql).toBe('SELECT 1');
    expect(scan("SELECT ';'").sql).toBe("SELECT ';'");
  });

  it('reads heredocs ($$…$$, $tag$…$tag$) as string literals, as the engine does', () => {
    expect(scan('SELECT $$;$$').sql).toBe('SELECT $$;$$');
    expect(scan("SELECT $x$ ' FORMAT CSV $x$ FORMAT JSON")).toMatchObject({ format: 'JSON' });
    expect(scan("SELECT $$'$$, 1 FORMAT TSV")).toMatchObject({ format: 'TSV' });
    expect(() => scan("SELECT $$'$$; SELECT 2 --'")).toThrow(/Multi-statements are not allowed/);
    expect(scan('SELECT a$b FROM t').kind).toBe('SELECT');
  });
});
