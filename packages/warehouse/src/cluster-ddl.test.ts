// The cluster form of the migrations, with the parser of the engine chDB embeds: the committed files of
// schemas/clickhouse/cluster are exactly what the generator makes of the migrations as they are (a change to
// a migration that changes its cluster DDL shows in review); every statement of them, with a cluster's and
// a database's names, is one the engine parses, in its own canonical text, with the engines, ON CLUSTER and
// Distributed tables expected; and what the generator cannot put in cluster form fails, naming the file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AstNode } from './ast-dump.ts';
import { openChdbWarehouse } from './chdb/chdb-warehouse.ts';
import {
  bindClusterNames,
  CLUSTER_PLACEHOLDER,
  ClusterDdlError,
  ClusterDdlGenerator,
  clusterFileChecksum,
  DATABASE_PLACEHOLDER,
  engineSqlParser,
  KEEPER_PATH,
  SHARDING_KEYS,
  type SqlParser,
} from './cluster-ddl.ts';
import { generateClusterFiles } from './cluster-schema.ts';
import { CLUSTER_DIR, MIGRATIONS_DIR, readBootstrap, readMigrations } from './migrations.ts';
import { splitStatements, type Warehouse } from './warehouse.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-cluster-ddl-'));
let warehouse: Warehouse;
let parser: SqlParser;
beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir, database: 'cluster_ddl' });
  parser = engineSqlParser(warehouse);
});
afterAll(async () => {
  await warehouse?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const clusterDir = join(MIGRATIONS_DIR, CLUSTER_DIR);
const sources = () => [readBootstrap(), ...readMigrations()];
/** Each committed cluster file's statements, with a cluster's and a database's names. */
const committed = () =>
  sources().map((source) => {
    const text = readFileSync(join(clusterDir, source.file), 'utf8');
    return {
      source,
      text,
      statements: splitStatements(text).map((s) => bindClusterNames(s, 'tally_cluster', 'tally')),
    };
  });

/** `Function name` (its arguments' lines) as the engine reads the storage definition of a CREATE TABLE. */
function engineOf(tree: AstNode): { name: string; args: string[] } {
  const engine = tree.children.find((c) => c.line.startsWith('Storage definition'))?.children[0];
  return { name: engine?.name ?? '', args: (engine?.children[0]?.children ?? []).map((arg) => arg.line) };
}

describe('the cluster form of the migrations (schemas/clickhouse/cluster)', () => {
  it('is exactly what the generator makes of every migration as it is: run `npm run schema:cluster`', async () => {
    const generated = await generateClusterFiles(parser);
    expect(generated.map((file) => file.path).sort()).toEqual(
      readdirSync(clusterDir)
        .map((f) => join(clusterDir, f))
        .sort(),
    );
    for (const file of generated) expect(readFileSync(file.path, 'utf8'), file.path).toBe(file.text);
    for (const { source, text } of committed())
      expect(clusterFileChecksum(text), source.file).toBe(source.checksum);
  });

  it("parses, statement by statement, with the engine's parser, as its own canonical text", async () => {
    for (const { source, statements } of committed()) {
      expect(statements.length, source.file).toBeGreaterThan(0);
      for (const sql of statements) {
        expect(await parser.canonical(sql), `${source.file}: ${sql.split('\n')[0]}`).toBe(sql);
        expect(sql).not.toMatch(new RegExp(`${CLUSTER_PLACEHOLDER}|${DATABASE_PLACEHOLDER}`));
      }
    }
  });

  it('makes each table a replicated local table and a Distributed table of its name, ON CLUSTER, sharded by its key', async () => {
    const created: string[] = [];
    for (const { source, statements } of committed()) {
      const sourceTables = new Map<string, AstNode>();
      for (const statement of source.statements) {
        const tree = await parser.tree(await parser.canonical(statement));
        if (/^CREATE TABLE/.test(statement.trim())) sourceTables.set(tree.name, tree);
      }
      for (const [name, sourceTree] of sourceTables) {
        created.push(name);
        const local = statements.find((s) =>
          s.startsWith(`CREATE TABLE IF NOT EXISTS ${name}_local ON CLUSTER tally_cluster\n`),
        );
        const distributed = statements.find((s) =>
          s.startsWith(`CREATE TABLE IF NOT EXISTS ${name} ON CLUSTER tally_cluster AS ${name}_local\n`),
        );
        expect(local, `${source.file}: ${name}_local`).toBeDefined();
        expect(distributed, `${source.file}: ${name}`).toBeDefined();
        const sourceEngine = engineOf(sourceTree);
        expect(engineOf(await parser.tree(local as string))).toEqual({
          name: `Replicated${sourceEngine.name}`,
          args: [`Literal '${KEEPER_PATH}'`, "Literal '{replica}'", ...sourceEngine.args],
        });
        const key = await parser.tree(`SELECT ${SHARDING_KEYS[name]?.key}`);
        const keyFunction = key.children[0]?.children[0]?.children[0]?.children[0]?.line;
        const { name: engine, args } = engineOf(await parser.tree(distributed as string));
        expect([engine, ...args]).toEqual([
          'Distributed',
          'Identifier tally_cluster',
          'Identifier tally',
          `Identifier ${name}_local`,
          keyFunction,
        ]);
      }
    }
    expect(created.sort()).toEqual(Object.keys(SHARDING_KEYS).sort());
  });

  it('runs every other DDL statement ON CLUSTER, and only the INSERTs of data once, unchanged', async () => {
    for (const { source, statements } of committed()) {
      for (const sql of statements) {
        const first = sql.split('\n')[0] as string;
        if (sql.startsWith('INSERT INTO ')) {
          expect(source.statements.map((s) => s.replace(/\s+/g, ' '))).toContainEqual(
            expect.stringContaining(first.slice(0, first.indexOf(')') + 1)),
          );
          continue;
        }
        expect(first, source.file).toMatch(
          /^(CREATE TABLE IF NOT EXISTS|CREATE VIEW IF NOT EXISTS|ALTER TABLE) \w+ ON CLUSTER tally_cluster( AS \w+_local)?$/,
        );
      }
    }
    // 007 adds two columns to events: on its local tables and on its Distributed table, in that order.
    const visits = committed().find((c) => c.source.file === '007_visits.sql')?.statements ?? [];
    expect(visits.slice(0, 4).map((s) => s.split('\n')[0])).toEqual([
      'ALTER TABLE events_local ON CLUSTER tally_cluster',
      'ALTER TABLE events ON CLUSTER tally_cluster',
      'ALTER TABLE events_local ON CLUSTER tally_cluster',
      'ALTER TABLE events ON CLUSTER tally_cluster',
    ]);
  });
});

describe('ClusterDdlGenerator', () => {
  /** A generator that has seen migration 001 (events) already. */
  async function afterEvents(): Promise<ClusterDdlGenerator> {
    const generator = new ClusterDdlGenerator(parser);
    await generator.migration('001_events.sql', readMigrations()[0]?.statements ?? []);
    return generator;
  }
  const refused = async (sql: string, reason: RegExp, generator?: ClusterDdlGenerator) => {
    const error = await (generator ?? (await afterEvents()))
      .statement('009_test.sql', sql)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClusterDdlError);
    expect((error as Error).message).toMatch(/^009_test\.sql: cannot generate the cluster form of "/);
    expect((error as Error).message).toMatch(reason);
  };

  it('puts an index ALTER on the local tables only, and a column ALTER on both', async () => {
    const generator = await afterEvents();
    const index = await generator.statement(
      't',
      'ALTER TABLE events ADD INDEX path_idx path TYPE bloom_filter GRANULARITY 1',
    );
    expect(index.map((s) => s.split('\n')[0])).toEqual([
      `ALTER TABLE events_local ON CLUSTER ${CLUSTER_PLACEHOLDER}`,
    ]);
    const column = await generator.statement('t', 'ALTER TABLE events DROP COLUMN IF EXISTS extra');
    expect(column.map((s) => s.split('\n')[0])).toEqual([
      `ALTER TABLE events_local ON CLUSTER ${CLUSTER_PLACEHOLDER}`,
      `ALTER TABLE events ON CLUSTER ${CLUSTER_PLACEHOLDER}`,
    ]);
  });

  it('fails loudly on what it cannot put in cluster form', async () => {
    await refused(
      'CREATE MATERIALIZED VIEW m ENGINE = MergeTree ORDER BY n AS SELECT 1 AS n',
      /has no cluster form/,
    );
    await refused('CREATE TABLE m (n UInt8) ENGINE = Memory', /only the \(non-replicated\) MergeTree family/);
    await refused('CREATE TABLE unknown_table (n UInt8) ENGINE = MergeTree ORDER BY n', /no sharding key/);
    await refused(
      'CREATE TABLE identities (project_id String, id String, visitor_id String) ENGINE = ReplacingMergeTree ORDER BY (project_id, id)',
      /reads visitor_id, outside ORDER BY/,
    );
    await refused(
      'CREATE TABLE t2 ON CLUSTER c (n UInt8) ENGINE = MergeTree ORDER BY n',
      /without ON CLUSTER/,
    );
    await refused('CREATE TABLE other.events (n UInt8) ENGINE = MergeTree ORDER BY n', /current database/);
    await refused('CREATE TABLE revenue AS events', /with its columns/);
    await refused(
      'CREATE TABLE revenue ENGINE = MergeTree ORDER BY n AS SELECT 1 AS n',
      /own columns and engine/,
    );
    await refused("ALTER TABLE events DELETE WHERE project_id = 'p'", /ALTER DELETE/);
    await refused(
      'ALTER TABLE events ADD COLUMN x UInt8, ADD INDEX i x TYPE minmax',
      /ADD_COLUMN, ADD_INDEX/,
    );
    await refused(
      'ALTER TABLE revenue ADD COLUMN x UInt8',
      /revenue is not one the migrations before it created/,
    );
    await refused('DROP TABLE events', /DROP TABLE/);
    await refused("INSERT INTO events (project_id) VALUES ('p')", /INSERT … SELECT/);
    await refused('SELEC 1', /the engine does not parse it/);
    await refused(`CREATE VIEW v AS SELECT '${CLUSTER_PLACEHOLDER}'`, /placeholders/);
  });

  it('binds only plain names for the cluster and the database', () => {
    expect(bindClusterNames(`ON CLUSTER ${CLUSTER_PLACEHOLDER} ${DATABASE_PLACEHOLDER}`, 'c1', 'db')).toBe(
      'ON CLUSTER c1 db',
    );
    expect(() => bindClusterNames('x', 'c; DROP TABLE t', 'db')).toThrow(/invalid cluster name/);
    expect(() => bindClusterNames('x', 'c', 'd-b')).toThrow(/invalid database name/);
  });
});
