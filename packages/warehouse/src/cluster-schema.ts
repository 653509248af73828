// The generated cluster form of schemas/clickhouse (schemas/clickhouse/cluster/*.sql): schema_migrations.sql
// and every numbered migration, through one ClusterDdlGenerator (an ALTER or INSERT needs the tables the
// files before it created). `npm run schema:cluster` writes the files; a test regenerates them and compares,
// so a migration that changes the cluster DDL shows in review.
import { join } from 'node:path';
import { ClusterDdlGenerator, clusterFileText, type SqlParser } from './cluster-ddl.ts';
import { CLUSTER_DIR, MIGRATIONS_DIR, readBootstrap, readMigrations } from './migrations.ts';

/** Each cluster file's path and text, schema_migrations.sql first, then the migrations in order. */
export async function generateClusterFiles(
  parser: SqlParser,
  dir: string = MIGRATIONS_DIR,
): Promise<{ path: string; text: string }[]> {
  const generator = new ClusterDdlGenerator(parser);
  const files = [];
  for (const source of [readBootstrap(), ...readMigrations(dir)]) {
    const statements = await generator.migration(source.file, source.statements);
    files.push({
      path: join(dir, CLUSTER_DIR, source.file),
      text: clusterFileText(source.file, source.checksum, statements),
    });
  }
  return files;
}
