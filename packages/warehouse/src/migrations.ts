// Schema migrations: the numbered SQL files of schemas/clickhouse (001_events.sql, …) applied in order,
// each once, recorded in the schema_migrations table (created by schema_migrations.sql beside them).
// Every statement is written to be idempotent (IF NOT EXISTS), so a migration interrupted half-way is safe
// to run again; two migrators starting together migrate once, one after the other, under the migration
// lock (migration-lock.ts). A migration already applied whose file has changed is an error: write a new
// file instead. On a cluster (the warehouse's `cluster`, CLICKHOUSE_CLUSTER) each file's statements come
// from its generated cluster form in schemas/clickhouse/cluster/ (cluster-ddl.ts), which must have been
// generated from the file as it is.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bindClusterNames, clusterFileChecksum } from './cluster-ddl.ts';
import { WarehouseError } from './errors.ts';
import { acquireMigrationLock, type MigrationLockOptions } from './migration-lock.ts';
import { splitStatements, type Warehouse } from './warehouse.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../schemas/clickhouse/', import.meta.url));
/** The generated cluster form of each file, under the migrations' directory. */
export const CLUSTER_DIR = 'cluster';
/** The file that creates schema_migrations, before any migration runs. */
export const BOOTSTRAP_FILE = 'schema_migrations.sql';

export interface Migration {
  version: number;
  name: string;
  /** Its file's name in the migrations' directory. */
  file: string;
  statements: string[];
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

export interface MigrateOptions {
  lock?: MigrationLockOptions;
  /** Called under the lock before each migration that is applied (tests hold a migrator there). */
  beforeMigration?: (name: string) => Promise<void> | void;
}

export class MigrationChangedError extends WarehouseError {
  constructor(name: string) {
    super(`migration ${name} was applied with different content; migrations are immutable, add a new one`, {
      retryable: false,
    });
    this.name = 'MigrationChangedError';
  }
}

function readSqlFile(dir: string, file: string, version: number): Migration {
  const sql = readFileSync(join(dir, file), 'utf8');
  return {
    version,
    name: file.replace(/\.sql$/, ''),
    file,
    statements: splitStatements(sql),
    checksum: createHash('sha256').update(sql).digest('hex'),
  };
}

/** Reads NNN_name.sql files from `dir`, in version order. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => readSqlFile(dir, file, Number(file.slice(0, 3))));
  const versions = new Set(migrations.map((m) => m.version));
  if (versions.size !== migrations.length) throw new WarehouseError(`duplicate migration numbers in ${dir}`);
  return migrations;
}

/** schema_migrations.sql, as a migration of version 0 that is never recorded. */
export function readBootstrap(): Migration {
  return readSqlFile(MIGRATIONS_DIR, BOOTSTRAP_FILE, 0);
}

/**
 * The statements of `migration` as the warehouse runs them: the file's own on one node; on a cluster,
 * those of its generated cluster form, with the cluster's and the database's names.
 */
export function statementsFor(
  warehouse: Warehouse,
  migration: Migration,
  dir: string = MIGRATIONS_DIR,
): string[] {
  if (!warehouse.cluster) return migration.statements;
  const path = join(dir, CLUSTER_DIR, migration.file);
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  if (clusterFileChecksum(text) !== migration.checksum) {
    throw new WarehouseError(
      `${path} is ${text ? `not the cluster form of ${migration.file} as it is` : 'missing'}: run npm run schema:cluster`,
      { retryable: false },
    );
  }
  const cluster = warehouse.cluster;
  return splitStatements(text).map((sql) => bindClusterNames(sql, cluster, warehouse.database));
}

type Applied = Map<number, { checksum: string }>;

/** The migrations recorded, or null when schema_migrations does not exist yet. */
async function readApplied(warehouse: Warehouse): Promise<Applied | null> {
  try {
    const rows = await warehouse.query<{ version: number; checksum: string }>(
      'SELECT version, checksum FROM schema_migrations FINAL ORDER BY version',
    );
    return new Map(rows.map((row) => [row.version, row]));
  } catch (error) {
    if (error instanceof WarehouseError && error.code === 60) return null; // UNKNOWN_TABLE
    throw error;
  }
}

/** Splits the migrations into those applied (their files unchanged, else MigrationChangedError) and the rest. */
function compare(migrations: readonly Migration[], applied: Applied): Migration[] {
  return migrations.filter((migration) => {
    const done = applied.get(migration.version);
    if (done && done.checksum !== migration.checksum) throw new MigrationChangedError(migration.name);
    return !done;
  });
}

export async function migrate(
  warehouse: Warehouse,
  dir: string = MIGRATIONS_DIR,
  options: MigrateOptions = {},
): Promise<MigrationResult> {
  const migrations = readMigrations(dir);
  const bootstrap = readBootstrap();
  // Every statement is read (and every cluster form checked) before anything runs.
  const plans = new Map(migrations.map((m) => [m.version, statementsFor(warehouse, m, dir)]));
  const bootstrapStatements = statementsFor(warehouse, bootstrap);
  const names = (list: readonly Migration[]) => list.map((m) => m.name);

  // Nothing to do, as at most starts: no lock taken.
  const before = await readApplied(warehouse);
  if (before && compare(migrations, before).length === 0)
    return { applied: [], alreadyApplied: names(migrations) };

  const lock = await acquireMigrationLock(warehouse, options.lock);
  let failed = true;
  try {
    for (const statement of bootstrapStatements) await warehouse.command(statement);
    // Read again under the lock: another migrator may have applied them while this one waited.
    const pending = compare(migrations, (await readApplied(warehouse)) ?? new Map());
    const result: MigrationResult = {
      applied: names(pending),
      alreadyApplied: names(migrations.filter((m) => !pending.includes(m))),
    };
    for (const migration of pending) {
      await options.beforeMigration?.(migration.name);
      for (const statement of plans.get(migration.version) ?? []) {
        await lock.renew();
        await warehouse.command(statement);
      }
      await warehouse.insert('schema_migrations', [
        { version: migration.version, name: migration.name, checksum: migration.checksum },
      ]);
    }
    failed = false;
    return result;
  } finally {
    // A failed release leaves the lock to its lease; it must not hide the failure that came first.
    await lock.release().catch((error: unknown) => {
      if (!failed) throw error;
    });
  }
}
