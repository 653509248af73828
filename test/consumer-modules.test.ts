// A process loads the warehouse backend it uses and not the other: the analytics consumer as its own
// process with CLICKHOUSE_URL (on the Kafka log) has neither chDB's native library mapped nor its module
// loaded, and loads @clickhouse/client; on the embedded warehouse it loads chDB and not @clickhouse/client;
// `tally sql` with CLICKHOUSE_URL loads no chDB either. The modules are read from the process's own
// module trace (test/support/module-trace.mjs), the native library from /proc/<pid>/maps.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { ROOT, spawnTallyService, tempDataDir } from './support/processes.ts';
import { pipelineEnv } from './support/tally-process.ts';
import { kill, startWarehouseServer } from './support/warehouse-server.ts';

const run = promisify(execFile);
const TRACE = join(ROOT, 'test/support/module-trace.mjs');

let warehouse: Awaited<ReturnType<typeof startWarehouseServer>>;
beforeAll(async () => {
  warehouse = await startWarehouseServer(join(tempDataDir(), 'warehouse'), 0);
});
afterAll(async () => {
  if (warehouse) await kill(warehouse.process, 'SIGTERM');
});

const traceFile = () => join(mkdtempSync(join(tmpdir(), 'tally-trace-')), 'modules.txt');
const tracedModules = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const loads = (modules: string[], name: string) =>
  modules.some((url) => url.includes(`/node_modules/${name}/`));

/** Starts the analytics consumer with the module trace, waits until it is ready, and tells what it loaded. */
async function consumerLoads(env: Record<string, string>) {
  const trace = traceFile();
  const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
  const consumer = await spawnTallyService(
    'services/analytics-consumer/src/main.ts',
    {
      ...inherited,
      ...pipelineEnv(env),
      TALLY_MODULE_TRACE: trace,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${TRACE}`.trim(),
    },
    60_000,
  );
  try {
    const maps = readFileSync(`/proc/${consumer.process.pid}/maps`, 'utf8');
    return { modules: tracedModules(trace), chdbMapped: /chdb/i.test(maps) };
  } finally {
    expect(await consumer.stop('SIGTERM')).toBe(0);
  }
}

it('a consumer process with CLICKHOUSE_URL loads @clickhouse/client and no chDB', async () => {
  const loaded = await consumerLoads({
    TALLY_DATA_DIR: tempDataDir(),
    CLICKHOUSE_URL: warehouse.url,
    KAFKA_BROKERS: inject('kafkaBrokers'),
    SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
    KAFKA_TOPIC_PREFIX: `test-${randomUUID().slice(0, 8)}.`,
  });
  expect(loads(loaded.modules, '@clickhouse/client')).toBe(true); // the trace sees what it does load
  expect(loads(loaded.modules, 'kafkajs')).toBe(true);
  for (const unused of ['chdb', '@chdb/lib-linux-x64-gnu', 'lz4-napi'])
    expect(loads(loaded.modules, unused), unused).toBe(false);
  expect(loaded.chdbMapped).toBe(false);
});

it('a consumer process on the embedded warehouse loads chDB and no @clickhouse/client', async () => {
  const loaded = await consumerLoads({ TALLY_DATA_DIR: tempDataDir() });
  expect(loads(loaded.modules, 'chdb')).toBe(true);
  expect(loaded.chdbMapped).toBe(true);
  for (const unused of ['@clickhouse/client', '@clickhouse/client-common', 'kafkajs'])
    expect(loads(loaded.modules, unused), unused).toBe(false);
});

it('tally sql with CLICKHOUSE_URL loads no chDB', async () => {
  const trace = traceFile();
  const { stdout } = await run(
    process.execPath,
    ['--import', TRACE, 'packages/cli/bin/tally.js', 'sql', 'SELECT 41 + 1 AS answer'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        TALLY_DATA_DIR: tempDataDir(),
        TALLY_MODULE_TRACE: trace,
        CLICKHOUSE_URL: warehouse.url,
        KAFKA_BROKERS: '',
        SCHEMA_REGISTRY_URL: '',
      },
      timeout: 60_000,
    },
  );
  expect(stdout).toContain('"answer":42');
  const modules = tracedModules(trace);
  expect(loads(modules, '@clickhouse/client')).toBe(true);
  expect(loads(modules, 'chdb')).toBe(false);
});
