// Memory of a consumer process (`npm run bench:consumer-memory`): the analytics consumer as its own
// process (services/analytics-consumer, compiled as the image runs it, or from the sources), on the Kafka
// record log and a ClickHouse URL (ClickHouse's HTTP interface over chDB, served by
// packages/warehouse-http/scripts/serve-clickhouse-http.ts as a process of its own), idle: VmRSS (and its
// anonymous and file-backed parts) `--idle-seconds` after its readiness file, and whether chDB's native
// library is mapped into it (/proc/<pid>/maps). `--repeat` runs, each on topics of its own. Prints one JSON
// object on stdout; progress on stderr.
//
//   node --conditions=@tally/source --import tsx bench/consumer-memory.ts [--repeat 3] [--idle-seconds 5]
//     [--runtime compiled|sources]

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitForReadiness } from '@tally/service';
import { buildIfStale } from '../scripts/build.mjs';
import { killChildrenOnExit, ROOT, sleep, startCompiled, startNode, stopAll } from './lib/children.ts';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { parseArgs, spread } from './lib/report.ts';
import { ensureServices, removeDir, removeRunState, serverEnv, tempDir } from './lib/stack.ts';

const options = parseArgs({ repeat: 3, idleSeconds: 5, runtime: 'compiled' }, process.argv.slice(2));
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Run {
  rssMiB: number;
  anonMiB: number;
  fileMiB: number;
  /** Whether chDB's native library is mapped into the process. */
  chdbMapped: boolean;
}

function memoryOf(pid: number): Run {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  const mib = (n: number) => Math.round((n / 1024) * 10) / 10;
  return {
    rssMiB: mib(kib('VmRSS')),
    anonMiB: mib(kib('RssAnon')),
    fileMiB: mib(kib('RssFile') + kib('RssShmem')),
    chdbMapped: /chdb/i.test(readFileSync(`/proc/${pid}/maps`, 'utf8')),
  };
}

killChildrenOnExit();
if (options.runtime === 'compiled') buildIfStale(ROOT);
const services = await ensureServices();
const warehouseDir = tempDir('consumer-memory-warehouse');
const runs: Run[] = [];
const before = loadSnapshot();
try {
  const warehouse = startNode('warehouse', 'packages/warehouse-http/scripts/serve-clickhouse-http.ts', [
    warehouseDir,
    '0',
  ]);
  const clickhouseUrl = (await warehouse.waitFor(/CLICKHOUSE_URL=(\S+)/, 60_000))[1] as string;
  for (let repeat = 1; repeat <= options.repeat; repeat++) {
    const dataDir = tempDir('consumer-memory');
    const prefix = `bench-${randomUUID().slice(0, 8)}.`;
    const readyFile = join(dataDir, 'ready.json');
    const env = serverEnv({
      TALLY_DATA_DIR: dataDir,
      KAFKA_BROKERS: services.kafkaBrokers,
      SCHEMA_REGISTRY_URL: services.schemaRegistryUrl,
      KAFKA_TOPIC_PREFIX: prefix,
      CLICKHOUSE_URL: clickhouseUrl,
      TALLY_READY_FILE: readyFile,
    });
    const consumer =
      options.runtime === 'compiled'
        ? startCompiled('consumer', 'services/analytics-consumer/dist/main.js', [], { env })
        : startNode('consumer', 'services/analytics-consumer/src/main.ts', [], { env });
    try {
      await waitForReadiness(readyFile, consumer.pid, 120_000, consumer.exited);
      await sleep(options.idleSeconds * 1000);
      const run = memoryOf(consumer.pid);
      runs.push(run);
      log(`${repeat}/${options.repeat} ${JSON.stringify(run)}`);
    } finally {
      await consumer.stop();
      await removeRunState(services, prefix, `${prefix}redis:`);
      removeDir(dataDir);
    }
  }
  await warehouse.stop();
} finally {
  await stopAll();
  removeDir(warehouseDir);
  await services.stop();
}
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'consumer-memory',
      process: 'analytics-consumer (Kafka log, CLICKHOUSE_URL), idle',
      runtime: options.runtime,
      idleSeconds: options.idleSeconds,
      rssMiB: spread(runs.map((r) => r.rssMiB)),
      anonMiB: spread(runs.map((r) => r.anonMiB)),
      fileMiB: spread(runs.map((r) => r.fileMiB)),
      chdbMapped: runs.map((r) => r.chdbMapped),
      machine: machineInfo(),
      load: { before, after: loadSnapshot() },
    },
    null,
    2,
  )}\n`,
);
