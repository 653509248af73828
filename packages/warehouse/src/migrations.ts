// Schema migrations: the numbered SQL files of schemas/clickhouse (001_events.sql, …) applied in order,
// each once, recorded in the schema_migrations table. Every statement is written to be idempotent
// (IF NOT EXISTS), so a migration interrupted half-way, or run by two processes at once, is safe to run
// again. A migration already applied whose file has changed is an error: write a new file instead.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WarehouseError } from './errors.ts';
import { splitStatements, type Warehouse } from './warehouse.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../schemas/clickhouse/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  statements: string[];
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationChangedError extends WarehouseError {
  constructor(name: string) {
    super(`migration ${name} was applied with different content; migrations are immutable, add a new one`, {
      retryable: false,
    });
    this.name = 'MigrationChangedError';
  }
}

/** Reads NNN_name.sql files from `dir`, in version order. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const sql = readFileSync(`${dir}/${file}`, 'utf8');
      return {
        version: Number(file.slice(0, 3)),
        name: file.replace(/\.sql$/, ''),
        statements: splitStatements(sql),
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    });
  const versions = new Set(migrations.map((m) => m.version));
  if (versions.size !== migrations.length) throw new WarehouseError(`duplicate migration numbers in ${dir}`);
  return migrations;
}

export async function migrate(warehouse: Warehouse, dir: string = MIGRATIONS_DIR): Promise<MigrationResult> {
  await warehouse.command(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version UInt32,
       name String,
       checksum String,
       applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
     ) ENGINE = ReplacingMergeTree ORDER BY version`,
  );
  const rows = await warehouse.query<{ version: number; name: string; checksum: string }>(
    'SELECT version, name, checksum FROM schema_migrations FINAL ORDER BY version',
  );
  const applied = new Map(rows.map((row) => [row.version, row]));
  const result: MigrationResult = { applied: [], alreadyApplied: [] };
  for (const migration of readMigrations(dir)) {
    const done = applied.get(migration.version);
    if (done) {
      if (done.checksum !== migration.checksum) throw new MigrationChangedError(migration.name);
      result.alreadyApplied.push(migration.name);
      continue;
    }
    for (const statement of migration.statements) await warehouse.command(statement);
    await warehouse.insert('schema_migrations', [
      { version: migration.version, name: migration.name, checksum: migration.checksum },
    ]);
    result.applied.push(migration.name);
  }
  return result;
}
