// `npm run schema:cluster`: writes schemas/clickhouse/cluster/*.sql, the cluster form of every migration,
// read and rewritten with the parser of the engine chDB embeds (packages/warehouse/src/cluster-ddl.ts).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openChdbWarehouse } from '../src/chdb/chdb-warehouse.ts';
import { engineSqlParser } from '../src/cluster-ddl.ts';
import { generateClusterFiles } from '../src/cluster-schema.ts';
import { CLUSTER_DIR, MIGRATIONS_DIR } from '../src/migrations.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-cluster-schema-'));
const warehouse = await openChdbWarehouse({ dataDir, database: 'cluster_schema' });
try {
  const files = await generateClusterFiles(engineSqlParser(warehouse));
  const clusterDir = join(MIGRATIONS_DIR, CLUSTER_DIR);
  mkdirSync(clusterDir, { recursive: true });
  const kept = new Set(files.map((file) => file.path));
  // A cluster file whose migration is gone goes too.
  for (const file of readdirSync(clusterDir))
    if (!kept.has(join(clusterDir, file))) rmSync(join(clusterDir, file));
  for (const file of files) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.text);
    process.stdout.write(`${file.path}\n`);
  }
} finally {
  await warehouse.close();
  rmSync(dataDir, { recursive: true, force: true });
}
