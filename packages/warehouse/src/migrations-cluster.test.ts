// migrate() against a cluster (the warehouse's `cluster` set), which cannot run here (no ClickHouse server
// with Keeper): a recording warehouse takes its statements, has each DDL statement parsed by chDB's parser
// instead of run, and runs the migration lock's statements (ON CLUSTER taken off) on real chDB. What it must
// send: the generated cluster files, with the cluster's and database's names, in order, under the lock taken
// ON CLUSTER; and nothing at all when a cluster file is missing or stale.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChdbWarehouse } from './chdb/chdb-warehouse.ts';
import { bindClusterNames, engineSqlParser, type SqlParser } from './cluster-ddl.ts';
import { WarehouseError } from './errors.ts';
import { LOCK_TABLE_PREFIX } from './migration-lock.ts';
import { CLUSTER_DIR, MIGRATIONS_DIR, migrate, readBootstrap, readMigrations } from './migrations.ts';
import { type QueryParams, type Row, splitStatements, type Warehouse } from './warehouse.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-migrations-cluster-'));
let engine: Warehouse;
let parser: SqlParser;
beforeAll(async () => {
  engine = await openChdbWarehouse({ dataDir, database: 'cluster_lock' });
  parser = engineSqlParser(engine);
});
afterAll(async () => {
  await engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ON_CLUSTER = ' ON CLUSTER tally_cluster';

/** A warehouse on cluster `tally_cluster`, database `tally`, that records what migrate() sends. */
class ClusterRecorder implements Warehouse {
  readonly kind = 'clickhouse';
  readonly database = 'tally';
  readonly cluster = 'tally_cluster';
  readonly commands: string[] = [];
  readonly lockCommands: string[] = [];
  readonly recorded: Row[] = [];

  async query<T = Row>(sql: string, params?: QueryParams): Promise<T[]> {
    if (sql.includes('system.tables')) return engine.query<T>(sql, params); // the lock's reads
    if (sql.startsWith('SELECT version, checksum FROM schema_migrations FINAL')) {
      if (
        !this.commands.some((c) => c.startsWith(`CREATE TABLE IF NOT EXISTS schema_migrations${ON_CLUSTER}`))
      ) {
        throw new WarehouseError('ClickHouse error 60 (UNKNOWN_TABLE)', { code: 60 });
      }
      return this.recorded as T[];
    }
    throw new Error(`unexpected query: ${sql}`);
  }
  async queryText(): Promise<string> {
    throw new Error('unexpected queryText');
  }
  async command(sql: string): Promise<void> {
    if (sql.includes(LOCK_TABLE_PREFIX)) {
      this.lockCommands.push(sql);
      expect(sql).toContain(ON_CLUSTER);
      await engine.command(sql.replace(ON_CLUSTER, ''));
      return;
    }
    expect(await parser.canonical(sql)).toBe(sql); // parsed by the engine, not run: chDB has no cluster
    this.commands.push(sql);
  }
  async insert(table: string, rows: readonly Row[]): Promise<void> {
    expect(table).toBe('schema_migrations');
    this.recorded.push(...rows);
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

/** What the committed cluster file of a migration says to run, with the recorder's names. */
const clusterStatements = (file: string, dir = MIGRATIONS_DIR) =>
  splitStatements(readFileSync(join(dir, CLUSTER_DIR, file), 'utf8')).map((s) =>
    bindClusterNames(s, 'tally_cluster', 'tally'),
  );

describe('migrate() on a cluster', () => {
  it('runs the generated cluster files in order, under a lock taken ON CLUSTER, and records each migration', async () => {
    const warehouse = new ClusterRecorder();
    const migrations = readMigrations();
    expect(await migrate(warehouse)).toEqual({ applied: migrations.map((m) => m.name), alreadyApplied: [] });
    expect(warehouse.commands).toEqual([
      ...clusterStatements(readBootstrap().file),
      ...migrations.flatMap((m) => clusterStatements(m.file)),
    ]);
    expect(warehouse.commands.join('\n')).not.toMatch(/__TALLY_/);
    expect(warehouse.recorded).toEqual(
      migrations.map((m) => ({ version: m.version, name: m.name, checksum: m.checksum })),
    );
    expect(warehouse.lockCommands.map((c) => c.split(' (')[0]?.split(' MODIFY')[0])).toEqual([
      `CREATE TABLE ${LOCK_TABLE_PREFIX}1${ON_CLUSTER}`,
      `ALTER TABLE ${LOCK_TABLE_PREFIX}1${ON_CLUSTER}`,
    ]);
    // Everything applied: the next start takes no lock and sends nothing.
    expect(await migrate(warehouse)).toEqual({ applied: [], alreadyApplied: migrations.map((m) => m.name) });
    expect(warehouse.lockCommands).toHaveLength(2);
  });

  it('refuses to start with a cluster file that is stale or missing, before sending anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-migrations-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    writeFileSync(
      join(dir, '008_exchange_rates.sql'),
      `${readFileSync(join(dir, '008_exchange_rates.sql'), 'utf8')}-- edited\n`,
    );
    const stale = new ClusterRecorder();
    await expect(migrate(stale, dir)).rejects.toThrow(
      /cluster\/008_exchange_rates\.sql is not the cluster form of 008_exchange_rates\.sql as it is: run npm run schema:cluster/,
    );
    rmSync(join(dir, CLUSTER_DIR, '008_exchange_rates.sql'));
    await expect(migrate(stale, dir)).rejects.toThrow(/cluster\/008_exchange_rates\.sql is missing/);
    expect([stale.commands, stale.lockCommands]).toEqual([[], []]);
  });
});
