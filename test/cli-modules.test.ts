// The CLI loads a command's libraries only when that command runs: `tally sql` reads the warehouse without
// loading the record log's (kafkajs, lmdb), `tally tokens` loads neither the log's nor the warehouse's, and
// `tally users` not the warehouse's.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT, tempDataDir } from './support/processes.ts';

const run = promisify(execFile);

/** Runs `tally …` and returns the URLs of the modules it resolved. */
async function modulesOf(args: string[], dataDir: string): Promise<string[]> {
  const trace = join(mkdtempSync(join(tmpdir(), 'tally-trace-')), 'modules.txt');
  await run(
    process.execPath,
    ['--import', './test/support/module-trace.mjs', 'packages/cli/bin/tally.js', ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        TALLY_DATA_DIR: dataDir,
        TALLY_MODULE_TRACE: trace,
        KAFKA_BROKERS: '',
        SCHEMA_REGISTRY_URL: '',
        CLICKHOUSE_URL: '',
      },
      timeout: 60_000,
    },
  );
  return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
}

const loads = (modules: string[], name: string) =>
  modules.some((url) => url.includes(`/node_modules/${name}/`));

it('runs tally sql without loading kafkajs or lmdb, and tally tokens without chdb either', async () => {
  const dataDir = tempDataDir();
  const sql = await modulesOf(['sql', 'SELECT 1'], dataDir);
  expect(loads(sql, 'chdb')).toBe(true); // the trace sees what a command does load
  expect(loads(sql, 'kafkajs')).toBe(false);
  expect(loads(sql, 'lmdb')).toBe(false);
  const tokens = await modulesOf(['tokens', 'list'], dataDir);
  for (const library of ['kafkajs', 'lmdb', 'chdb', '@clickhouse/client'])
    expect(loads(tokens, library), library).toBe(false);
  // The dashboard's users live in LMDB (or Redis): no warehouse, no record log client.
  const users = await modulesOf(['users', 'list'], dataDir);
  for (const library of ['kafkajs', 'chdb', '@clickhouse/client'])
    expect(loads(users, library), library).toBe(false);
  const deadLetters = await modulesOf(['dead-letters', 'list'], dataDir);
  expect(loads(deadLetters, 'lmdb')).toBe(true);
});
