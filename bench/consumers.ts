// Consumers catching up a backlog (`npm run bench:consumers`): the path a high-volume user takes past one
// machine — records in Kafka, analytics consumers as processes of their own, the warehouse a ClickHouse
// HTTP interface (Tally's over chDB, packages/warehouse-http/scripts/serve-clickhouse-http.ts, in its own
// process).
// For each run: a fresh warehouse (optionally holding `--prefill` records already: events, their ids and
// visits, spread over the past year), `--records` records appended to Kafka before any consumer starts
// (70% pageview, 25% event, 5% identify, over `--projects` projects and `--visitors` visitors — by default a
// quarter of the records, so four records each — with up to three sessions each, spread over the last
// `--hours` hours), then `--consumers` analytics consumers started together; the run ends
// when the group has no lag. Reported: records landed per second (from the consumers' readiness to no lag),
// each batch's time (the consumers' own "analytics batch landed" lines), CPU of the consumers and of the
// warehouse, and a check that every record landed once (events and identities against what was sent,
// visits' pageviews and events equal to the events' rows).
// Prints one JSON object on stdout; progress on stderr.
//
//   node --conditions=@tally/source --import tsx bench/consumers.ts [--records 200000] [--runs 1:0,2:0,1:10000000]
//     [--batch-size 5000] [--partitions 6] [--projects 4] [--visitors 0] [--hours 6] [--runtime compiled|sources]
//     [--cpu-prof <dir>] (a CPU profile of each consumer, written when it stops)
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import type { IngestRecord } from '@tally/contract';
import { openRecordLog, type RecordLog } from '@tally/log';
import { waitForReadiness } from '@tally/service';
import { migrate, openClickHouseWarehouse, type Warehouse } from '@tally/warehouse';
import { buildIfStale } from '../scripts/build.mjs';
import { type Child, Monitor, ROOT, sleep, startCompiled, startNode, stopAll } from './lib/children.ts';
import { machineInfo } from './lib/machine.ts';
import { atLeast, atMost, parseArgs, spread } from './lib/report.ts';
import { ensureServices, removeDir, removeRunState, type Services, serverEnv, tempDir } from './lib/stack.ts';

const options = parseArgs(
  {
    records: 200_000,
    runs: '1:0,2:0,1:10000000',
    batchSize: 5000,
    partitions: 6,
    projects: 4,
    visitors: 0,
    hours: 6,
    runtime: 'compiled',
    timeout: 900,
    cpuProf: '',
  },
  process.argv.slice(2),
);
const log = (message: string) => process.stderr.write(`[bench:consumers] ${message}\n`);
const TARGETS = { recordsPerSecond: 5000, twoOverOne: 1.6, prefilledOverEmpty: 1.2 };

interface RunResult {
  consumers: number;
  prefill: number;
  records: number;
  seconds: number;
  recordsPerSecond: number;
  batches: number;
  batchMs: ReturnType<typeof spread>;
  batchMsPer1000: ReturnType<typeof spread>;
  consumerCpuPercent: number[];
  warehouseCpuPercent: number;
  /** The whole machine's CPU in the window (200 = both cores of a 2-core machine), and what was not ours. */
  machineCpuPercent: number;
  otherCpuPercent: number;
  /** CPU of the consumers and of the warehouse per record landed, in µs. */
  consumerCpuUsPerRecord: number;
  warehouseCpuUsPerRecord: number;
  exact: { events: boolean; identities: boolean; visits: boolean; detail: Record<string, number> };
}

/** The warehouse's HTTP interface over a fresh chDB directory, in a process of its own. */
async function startWarehouse(dir: string): Promise<{ child: Child; url: string }> {
  // (a script of the package, not compiled: it runs from the sources through tsx, whose cost is at load)
  const child = startNode(
    'warehouse',
    'packages/warehouse-http/scripts/serve-clickhouse-http.ts',
    [dir, '0'],
    {
      env: serverEnv({ UV_THREADPOOL_SIZE: '8' }),
    },
  );
  const [, url] = await child.waitFor(/CLICKHOUSE_URL=(\S+)/, 60_000);
  return { child, url: url as string };
}

/**
 * `count` records already stored, as a year of history of another project: its events, their ids in
 * record_ids and a visit per five of them, in slices of a million (so that no statement outlasts the
 * client's timeout).
 */
async function prefill(warehouse: Warehouse, count: number): Promise<void> {
  if (count === 0) return;
  const started = Date.now();
  const year = 365 * 24 * 3600 * 1000;
  const from = Date.now() - year - 7 * 24 * 3600 * 1000;
  const step = Math.max(1, Math.floor(year / count));
  for (let done = 0; done < count; done += 1_000_000) {
    const n = Math.min(1_000_000, count - done);
    const time = `fromUnixTimestamp64Milli(toInt64(${from} + (number + ${done}) * ${step}), 'UTC')`;
    const id = `reinterpretAsUUID(sipHash128(toString(number + ${done})))`;
    await warehouse.command(
      `INSERT INTO events (project_id, id, type, timestamp, received_at, visitor_id, session_id, path, hostname, url)
       SELECT 'bench-old', toString(${id}), 'pageview', ${time}, ${time},
              concat('v', toString((number + ${done}) % 200000)), concat('s', toString(intDiv(number + ${done}, 5))),
              '/', 'old.example', 'https://old.example/'
       FROM numbers(${n})`,
    );
    await warehouse.command(
      `INSERT INTO record_ids (project_id, id, type, received_at)
       SELECT 'bench-old', ${id}, 'pageview', ${time} FROM numbers(${n})`,
    );
    await warehouse.command(
      `INSERT INTO visits (project_id, visitor_id, start, end, pageviews, events, is_bounce, duration_ms,
         entry_path, exit_path, hostname, version, is_deleted)
       SELECT 'bench-old', concat('v', toString(number % 200000)), ${time}, ${time} + toIntervalMinute(10), 5, 0,
         false, 600000, '/', '/', 'old.example', 1, 0
       FROM numbers(${Math.ceil(n / 5)})`,
    );
    log(`prefill: ${done + n} of ${count} records (${Math.round((Date.now() - started) / 1000)} s)`);
  }
  log(`prefill done in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** The backlog: pageviews and events of visitors with several sessions, and some identifies. */
function backlog(count: number): IngestRecord[] {
  const records: IngestRecord[] = [];
  const span = options.hours * 3600_000;
  const now = Date.now() - span;
  // Four records per visitor by default: the pageviews and events of a visit or two.
  const visitors = options.visitors || Math.max(1, Math.round(count / 4));
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < count; i++) {
    const visitor = Math.floor(random() * visitors);
    const project = `bench-site-${(visitor % options.projects) + 1}`;
    const session = `s${visitor}-${Math.floor(random() * 3)}`;
    const time = now + Math.floor(random() * span);
    const envelope = {
      id: randomUUID(),
      project_id: project,
      received_at: time,
      timestamp: time,
      client_timestamp: null,
      timestamp_clamped: false,
      user_agent:
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      visitor_fingerprint_derived: false,
      country: 'DE',
    };
    const kind = random();
    if (kind < 0.7) {
      records.push({
        ...envelope,
        type: 'pageview',
        data: {
          session_id: session,
          visitor_fingerprint: `fp${visitor}`,
          url: `https://${project}.example/p/${visitor % 50}`,
          path: `/p/${visitor % 50}`,
          referrer: 'https://www.google.com/',
          title: 'A page',
          screen_width: 1440,
        },
      } as IngestRecord);
    } else if (kind < 0.95) {
      records.push({
        ...envelope,
        type: 'event',
        data: {
          session_id: session,
          visitor_fingerprint: `fp${visitor}`,
          event_name: 'clicked',
          event_data: { button: 'signup' },
        },
      } as IngestRecord);
    } else {
      records.push({
        ...envelope,
        type: 'identify',
        data: { session_id: session, visitor_fingerprint: `fp${visitor}`, customer_id: `cus_${visitor}` },
      } as IngestRecord);
    }
  }
  return records;
}

async function appendAll(recordLog: RecordLog, records: readonly IngestRecord[]): Promise<void> {
  const started = Date.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < records.length; i += 2000) {
    inFlight.push(recordLog.append(records.slice(i, i + 2000)));
    if (inFlight.length >= 4) await inFlight.shift();
  }
  await Promise.all(inFlight);
  log(`appended ${records.length} records to Kafka in ${Math.round((Date.now() - started) / 100) / 10} s`);
}

async function runOnce(services: Services, consumers: number, prefillCount: number): Promise<RunResult> {
  const dir = tempDir('consumers');
  const topicPrefix = `bench-consumers-${randomUUID().slice(0, 8)}.`;
  const kafkaEnv = {
    KAFKA_BROKERS: services.kafkaBrokers,
    SCHEMA_REGISTRY_URL: services.schemaRegistryUrl,
    KAFKA_TOPIC_PREFIX: topicPrefix,
    KAFKA_PARTITIONS: String(options.partitions),
  };
  const warehouseServer = await startWarehouse(join(dir, 'warehouse'));
  const warehouse = await openClickHouseWarehouse({ url: warehouseServer.url, database: 'tally' });
  let recordLog: RecordLog | null = null;
  try {
    await migrate(warehouse);
    await prefill(warehouse, prefillCount);
    recordLog = await openRecordLog(
      loadConfig({ ...kafkaEnv, TALLY_DATA_DIR: dir, TALLY_ENV_FILE: '/dev/null' }),
    );
    const records = backlog(options.records);
    await appendAll(recordLog, records);
    const monitor = new Monitor();
    const children: Child[] = [];
    const readyFiles: string[] = [];
    for (let i = 0; i < consumers; i++) {
      const readyFile = join(dir, `consumer-${i}.ready.json`);
      readyFiles.push(readyFile);
      const env = serverEnv({
        TALLY_READY_FILE: readyFile,
        ...kafkaEnv,
        CLICKHOUSE_URL: warehouseServer.url,
        CLICKHOUSE_DATABASE: 'tally',
        TALLY_DATA_DIR: join(dir, `consumer-${i}`),
        CONSUMER_BATCH_SIZE: String(options.batchSize),
        LOG_LEVEL: 'info',
      });
      const nodeArgs = options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProf}`] : [];
      children.push(
        options.runtime === 'compiled'
          ? startCompiled(`analytics-${i}`, 'services/analytics-consumer/dist/main.js', [], { env, nodeArgs })
          : startNode(`analytics-${i}`, 'services/analytics-consumer/src/main.ts', [], { env, nodeArgs }),
      );
    }
    for (const child of [...children, warehouseServer.child]) monitor.watch(child.name, child.pid);
    // From every consumer ready (connected, its warehouse migrated) to no lag: the landing, not the start.
    await Promise.all(
      children.map((child, i) => waitForReadiness(readyFiles[i] as string, child.pid, 120_000, child.exited)),
    );
    const started = Date.now();
    // Landed: the group has committed every record (no lag in any topic it reads).
    const deadline = started + options.timeout * 1000;
    let firstLag = -1;
    for (;;) {
      const lag = ((await recordLog.backlog?.({ oldest: false })) ?? [])
        .filter((b) => b.group.endsWith('analytics'))
        .reduce((sum, b) => sum + b.lag, 0);
      const committedSomething = ((await recordLog.backlog?.({ oldest: false })) ?? []).some((b) =>
        b.group.endsWith('analytics'),
      );
      if (firstLag < 0 && committedSomething) firstLag = lag;
      if (committedSomething && lag === 0) break;
      if (Date.now() > deadline) throw new Error(`not landed within ${options.timeout} s (lag ${lag})`);
      await sleep(250);
    }
    const ended = Date.now();
    const seconds = (ended - started) / 1000;
    const usage = monitor.window(started, ended);
    monitor.stop();
    const batches = children.flatMap((child) =>
      child
        .stdout()
        .split('\n')
        .filter((line) => line.includes('analytics batch landed'))
        .map((line) => JSON.parse(line) as { records: number; duration_ms: number }),
    );
    const exact = await checkExact(warehouse, records);
    return {
      consumers,
      prefill: prefillCount,
      records: records.length,
      seconds: Math.round(seconds * 10) / 10,
      recordsPerSecond: Math.round(records.length / seconds),
      batches: batches.length,
      batchMs: spread(batches.map((b) => b.duration_ms)),
      batchMsPer1000: spread(batches.map((b) => (b.duration_ms * 1000) / Math.max(1, b.records))),
      consumerCpuPercent: children.map((c) => usage.processes[c.name]?.cpuPercent ?? 0),
      warehouseCpuPercent: usage.processes.warehouse?.cpuPercent ?? 0,
      machineCpuPercent: usage.machineCpuPercent,
      otherCpuPercent: usage.otherCpuPercent,
      consumerCpuUsPerRecord: Math.round(
        ((children.reduce((n, c) => n + (usage.processes[c.name]?.cpuPercent ?? 0), 0) / 100) *
          seconds *
          1e6) /
          records.length,
      ),
      warehouseCpuUsPerRecord: Math.round(
        (((usage.processes.warehouse?.cpuPercent ?? 0) / 100) * seconds * 1e6) / records.length,
      ),
      exact,
    };
  } finally {
    await stopAll();
    await recordLog?.close();
    await warehouse.close();
    await removeRunState(services, topicPrefix, `bench-unused-${randomUUID()}:`);
    removeDir(dir);
  }
}

/** Every record landed once: events and identities as sent, and the visits hold every event once. */
async function checkExact(warehouse: Warehouse, records: readonly IngestRecord[]) {
  const sent = { events: 0, identities: 0 };
  for (const r of records) {
    if (r.type === 'identify') sent.identities++;
    else sent.events++;
  }
  const [row] = await warehouse.query<{ events: number; identities: number; visit_records: number }>(
    `SELECT
       (SELECT count() FROM events FINAL WHERE project_id LIKE 'bench-site-%') AS events,
       (SELECT count() FROM identities FINAL WHERE project_id LIKE 'bench-site-%') AS identities,
       (SELECT sum(pageviews + events) FROM visits FINAL WHERE project_id LIKE 'bench-site-%') AS visit_records`,
  );
  const detail = { sentEvents: sent.events, sentIdentities: sent.identities, ...(row ?? {}) };
  return {
    events: row?.events === sent.events,
    identities: row?.identities === sent.identities,
    visits: Number(row?.visit_records) === sent.events,
    detail,
  };
}

async function main() {
  if (options.runtime === 'compiled') buildIfStale(ROOT);
  const services = await ensureServices();
  const results: RunResult[] = [];
  try {
    for (const run of String(options.runs).split(',')) {
      const [consumers, prefillCount] = run.split(':').map(Number) as [number, number];
      log(`run: ${consumers} consumer(s), ${prefillCount} records stored before`);
      const result = await runOnce(services, consumers, prefillCount ?? 0);
      log(
        `  ${result.recordsPerSecond} records/s, batch median ${result.batchMs.median} ms, exact ${JSON.stringify(result.exact)}`,
      );
      results.push(result);
    }
  } finally {
    await services.stop();
  }
  const one = results.find((r) => r.consumers === 1 && r.prefill === 0);
  const two = results.find((r) => r.consumers === 2 && r.prefill === 0);
  const prefilled = results.find((r) => r.consumers === 1 && r.prefill > 0);
  const targets = [
    one && {
      figure: 'one consumer, records/s',
      ...atLeast(TARGETS.recordsPerSecond, one.recordsPerSecond, '', 0),
    },
    one &&
      two && {
        figure: 'two consumers over one',
        ...atLeast(TARGETS.twoOverOne, two.recordsPerSecond / one.recordsPerSecond, '×', 2),
      },
    one &&
      prefilled && {
        figure: 'batch time per 1,000 records, prefilled over empty',
        ...atMost(
          TARGETS.prefilledOverEmpty,
          prefilled.batchMsPer1000.median / one.batchMsPer1000.median,
          '×',
          2,
        ),
      },
  ].filter(Boolean);
  process.stdout.write(
    `${JSON.stringify({ bench: 'consumers', machine: machineInfo(), options, results, targets }, null, 2)}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
});
