// `tally sql "<statement>"`: runs one statement on the warehouse. A query (SELECT, WITH, SHOW, DESCRIBE,
// EXPLAIN, EXISTS) prints its rows as JSON lines, or as the format it names (`… FORMAT CSV`); any other
// statement prints nothing. `tally migrate`
// applies the schema migrations (the consumers also do at start-up).
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { migrate } from '@tally/warehouse';
import { UsageError } from './usage-error.ts';
import { withWarehouse } from './warehouse.ts';

const RETURNS_ROWS = /^\s*(?:\(\s*)*(SELECT|WITH|SHOW|DESC|DESCRIBE|EXPLAIN|EXISTS)\b/i;
const FORMAT_CLAUSE = /\bFORMAT\s+\w+\s*$/i;

export async function runSql(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} });
  const statement = positionals.join(' ').trim().replace(/;\s*$/, '');
  if (!statement)
    throw new UsageError('sql needs a statement, e.g. tally sql "SELECT count() FROM pageviews"');
  await withWarehouse(config, async (warehouse) => {
    if (!RETURNS_ROWS.test(statement)) return warehouse.command(statement);
    // A query that names its format (`… FORMAT CSV`) is printed as the engine writes it.
    if (FORMAT_CLAUSE.test(statement)) return void process.stdout.write(await warehouse.queryText(statement));
    const rows = await warehouse.query(statement);
    process.stdout.write(rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  });
  return 0;
}

export async function runMigrate(config: TallyConfig): Promise<number> {
  const result = await withWarehouse(config, (warehouse) => migrate(warehouse));
  for (const name of result.applied) process.stdout.write(`applied ${name}\n`);
  process.stdout.write(
    `${result.applied.length} migration(s) applied, ${result.alreadyApplied.length} already applied\n`,
  );
  return 0;
}
