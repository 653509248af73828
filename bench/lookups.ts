// What a consumer's lookups and inserts cost against ClickHouse's HTTP interface over chDB (its own
// process, as the integration tests run it): the record ids of a batch of `--ids` (5,000) of one project
// looked up (half of them stored) as query parameters in the URL (one query; then cut to fit the
// interface's 16 KiB), in the multipart/form-data body (one query, and in lists cut by size as
// parameter-lists.ts cuts them), and through a table of the lookup's own (insert the ids, join, delete);
// for reference, the embedded chDB backend's bound parameters. Then an insert of events dated in 150
// months, cut into statements of at most N partitions. Median of `--runs` (7) per way; prints one JSON
// object with the load average.
//
//   npm run bench:lookups -- [--ids 5000] [--runs 7]
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import {
  insertBlocks,
  migrate,
  openChdbWarehouse,
  openClickHouseWarehouse,
  parameterLists,
  type Row,
  storedRecordIds,
} from '@tally/warehouse';
import { parseArgs, spread } from './lib/report.ts';

const options = parseArgs({ ids: 5000, runs: 7 }, process.argv.slice(2));
const log = (message: string) => process.stderr.write(`[bench:lookups] ${message}\n`);
const LOOKUP = `SELECT DISTINCT toString(id) AS id FROM record_ids
  WHERE project_id = {project:String} AND id IN {ids:Array(String)}`;

async function serve(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@tally/source',
      '--import',
      'tsx',
      'packages/warehouse-http/scripts/serve-clickhouse-http.ts',
      dataDir,
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d;
      const m = /CLICKHOUSE_URL=(\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the interface exited with ${code}`)));
  });
  return { url, child };
}

/** Runs `lookup` `runs` times: its round trips, the ids found, and the median time (or the failure). */
async function measure(
  name: string,
  lookup: () => Promise<{ trips: number; found: number }>,
): Promise<Record<string, unknown>> {
  const times: number[] = [];
  let last = { trips: 0, found: 0 };
  for (let run = 0; run < options.runs; run++) {
    const start = performance.now();
    try {
      last = await lookup();
    } catch (error) {
      const e = error as Error & { code?: unknown };
      return { name, failed: `${e.name}: ${e.message.slice(0, 60) || '(empty body)'}` };
    }
    times.push(performance.now() - start);
  }
  const { median, min, max } = spread(times);
  const result = { name, trips: last.trips, found: last.found, median_ms: +median.toFixed(1) };
  log(JSON.stringify({ ...result, min_ms: +min.toFixed(1), max_ms: +max.toFixed(1) }));
  return result;
}

const chunks = <T>(values: readonly T[], size: number) =>
  Array.from({ length: Math.ceil(values.length / size) }, (_, i) => values.slice(i * size, (i + 1) * size));

async function lookupsOf(client: ClickHouseClient, lists: readonly string[][]) {
  let found = 0;
  for (const ids of lists) {
    const result = await client.query({
      query: LOOKUP,
      query_params: { project: 'p', ids },
      format: 'JSONEachRow',
    });
    found += (await result.json()).length;
  }
  return { trips: lists.length, found };
}

const dataDir = mkdtempSync(join(tmpdir(), 'tally-bench-lookups-'));
const ids = Array.from({ length: options.ids }, () => randomUUID());
const { url, child } = await serve(dataDir);
const results: Record<string, unknown>[] = [];
const inserts: Record<string, unknown>[] = [];
try {
  const warehouse = await openClickHouseWarehouse({ url, database: 'tally' });
  await migrate(warehouse);
  await warehouse.insert(
    'record_ids',
    ids
      .filter((_, i) => i % 2 === 0)
      .map((id) => ({ project_id: 'p', id, type: 'pageview', received_at: Date.now() })),
  );
  const inUrl = createClient({ url, database: 'tally' });
  const inBody = createClient({ url, database: 'tally', use_multipart_params: true });
  results.push(await measure('URL, one query', () => lookupsOf(inUrl, [ids])));
  results.push(await measure('URL, lists of 300 (under 16 KiB)', () => lookupsOf(inUrl, chunks(ids, 300))));
  results.push(await measure('body (multipart), one query', () => lookupsOf(inBody, [ids])));
  results.push(await measure('body (multipart), lists of 1,000', () => lookupsOf(inBody, chunks(ids, 1000))));
  results.push(
    await measure('body (multipart), lists cut by size (chosen)', () =>
      lookupsOf(inBody, parameterLists(ids, 10_000)),
    ),
  );
  results.push(
    await measure('storedRecordIds through the ClickHouse backend (chosen)', async () => ({
      trips: parameterLists(ids, 10_000).length,
      found: (await storedRecordIds(warehouse, 'p', ids)).size,
    })),
  );
  await warehouse.command(
    'CREATE TABLE lookup_ids (lookup String, id String) ENGINE = MergeTree ORDER BY (lookup, id)',
  );
  results.push(
    await measure('a table of its own: insert, join, delete', async () => {
      const lookup = randomUUID();
      await inUrl.insert({
        table: 'lookup_ids',
        values: ids.map((id) => ({ lookup, id })),
        format: 'JSONEachRow',
      });
      const result = await inUrl.query({
        query: `SELECT DISTINCT toString(id) AS id FROM record_ids WHERE project_id = 'p'
                AND id IN (SELECT toUUID(id) FROM lookup_ids WHERE lookup = {lookup:String})`,
        query_params: { lookup },
        format: 'JSONEachRow',
      });
      const found = (await result.json()).length;
      await inUrl.command({
        query: 'ALTER TABLE lookup_ids DELETE WHERE lookup = {lookup:String}',
        query_params: { lookup },
      });
      return { trips: 3, found };
    }),
  );
  // Inserts of one event per month over 150 months, cut into statements of at most N partitions.
  const months = (project: string): Row[] =>
    Array.from({ length: 150 }, (_, i) => ({
      project_id: project,
      type: 'pageview',
      id: randomUUID(),
      timestamp: Date.UTC(2010, i, 15),
      received_at: Date.now(),
    }));
  for (const n of [10, 25, 50, 99]) {
    const times: number[] = [];
    let statements = 0;
    for (let run = 0; run < options.runs; run++) {
      const blocks = insertBlocks('events', months(`n${n}_${run}`), n);
      statements = blocks.length;
      const start = performance.now();
      for (const block of blocks)
        await inUrl.insert({ table: 'events', values: block, format: 'JSONEachRow' });
      times.push(performance.now() - start);
    }
    const result = { partitions_per_insert: n, statements, median_ms: +spread(times).median.toFixed(1) };
    log(JSON.stringify(result));
    inserts.push(result);
  }
  await inUrl.close();
  await inBody.close();
  await warehouse.close();
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}
// The embedded backend, for reference (no HTTP: bound parameters).
const embedded = await openChdbWarehouse({ dataDir, database: 'tally' });
for (const size of [1000, options.ids]) {
  results.push(
    await measure(`embedded chDB, lists of ${size}`, async () => {
      let found = 0;
      const lists = chunks(ids, size);
      for (const list of lists) found += (await embedded.query(LOOKUP, { project: 'p', ids: list })).length;
      return { trips: lists.length, found };
    }),
  );
}
await embedded.close();
rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({ ids: options.ids, runs: options.runs, loadavg: loadavg().map((l) => +l.toFixed(2)), lookups: results, inserts_150_months: inserts }, null, 2)}\n`,
);
