// Kafka client benchmark: kafkajs (what packages/log uses) against @platformatic/kafka, producing to a
// real broker as the Kafka record log does: idempotent producer, acks=all, Buffer values the size of an
// Avro record, per compression codec. Two workloads, each `--repeat` times, clients alternating:
//   batches   sequential produce requests of 1,000 messages (the raw throughput of the client);
//   gateway   `--concurrency` appenders, each appending one message and waiting for its acknowledgement,
//             through the Kafka log's own LingerBatcher (2 ms linger), which may have several produce
//             requests in flight: the gateway's pattern, with its latency per append.
// A warm-up run per client comes first, not counted.
// Every run writes to a topic of its own (6 partitions), and counts what the topic holds afterwards: a
// client that loses or duplicates messages is reported, not only timed. CPU is the benchmark process's
// (the client runs in it), per message: steadier than messages per second on a shared machine.
//
// @platformatic/kafka is not a dependency of Tally: install it into a folder of its own first, e.g.
//   npm install --prefix /tmp/kafka-clients @platformatic/kafka@2.12.1
//   KAFKA_BROKERS=127.0.0.1:19092 node --conditions=@tally/source --import tsx bench/kafka-clients.ts \
//     --platformatic /tmp/kafka-clients [--messages 20000] [--repeat 3] [--codecs none,snappy,lz4,zstd]
//     [--concurrency 256] [--value-bytes 300]
// Prints one JSON object on stdout; progress on stderr.
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import kafkajs from 'kafkajs';
import SnappyCodec from 'kafkajs-snappy';
import { LingerBatcher, type SendBatch } from '../packages/log/src/kafka/producer.ts';
import { loadSnapshot, machineInfo } from './lib/machine.ts';
import { parseArgs, spread } from './lib/report.ts';

const { CompressionCodecs, CompressionTypes, Kafka, logLevel } = kafkajs;
CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;

const options = parseArgs(
  {
    platformatic: '',
    messages: 20_000,
    repeat: 3,
    codecs: 'none,snappy,lz4,zstd',
    concurrency: 256,
    valueBytes: 300,
    partitions: 6,
  },
  process.argv.slice(2),
);
const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
if (!brokers.length) throw new Error('set KAFKA_BROKERS (a running broker, e.g. bash infra/kafka/start.sh)');
if (!options.platformatic) throw new Error('--platformatic <dir where @platformatic/kafka is installed>');

type Codec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
type TopicMessages = Parameters<SendBatch>[0];

interface Client {
  name: string;
  version: string;
  send(topicMessages: TopicMessages): Promise<void>;
  close(): Promise<void>;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const kafka = new Kafka({ clientId: 'tally-bench-clients', brokers, logLevel: logLevel.NOTHING });

const KAFKAJS_CODECS: Partial<Record<Codec, number>> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy, // kafkajs-snappy, as packages/log
};

async function kafkajsClient(codec: Codec): Promise<Client | null> {
  const compression = KAFKAJS_CODECS[codec];
  if (compression === undefined) return null; // lz4 and zstd need add-ons Tally does not install
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  return {
    name: 'kafkajs',
    version: (await import('kafkajs/package.json', { with: { type: 'json' } })).default.version,
    send: async (topicMessages) => void (await producer.sendBatch({ acks: -1, compression, topicMessages })),
    close: () => producer.disconnect(),
  };
}

async function platformaticClient(codec: Codec): Promise<Client> {
  const dir = join(options.platformatic, 'node_modules', '@platformatic', 'kafka');
  const { Producer } = await import(pathToFileURL(join(dir, 'dist', 'index.js')).href);
  const { version } = (
    await import(pathToFileURL(join(dir, 'package.json')).href, { with: { type: 'json' } })
  ).default;
  const producer = new Producer({
    clientId: 'tally-bench-clients',
    bootstrapBrokers: brokers,
    idempotent: true,
    acks: -1,
    autocreateTopics: false,
    ...(codec !== 'none' && { compression: codec }),
  });
  return {
    name: '@platformatic/kafka',
    version,
    send: async (topicMessages) => {
      await producer.send({
        messages: topicMessages.flatMap(({ topic, messages }) =>
          messages.map((m) => ({
            topic,
            key: m.key === null ? undefined : Buffer.from(m.key),
            value: m.value,
          })),
        ),
      });
    },
    close: () => producer.close(),
  };
}

/** Values the size of an Avro record: half random bytes, half repeated text, so codecs have work to do. */
function values(count: number): Buffer[] {
  const text = Buffer.from('https://shop.example/pricing?utm_source=newsletter '.repeat(20));
  return Array.from({ length: count }, () => {
    const value = Buffer.alloc(options.valueBytes);
    randomBytes(options.valueBytes >> 1).copy(value);
    text.copy(value, options.valueBytes >> 1);
    return value;
  });
}

async function topicHolds(topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

interface RunResult {
  messagesPerSecond: number;
  cpuMicrosPerMessage: number;
  appendP50Ms?: number;
  appendP99Ms?: number;
  /** Messages the topic holds afterwards (must equal the messages sent). */
  stored: number;
  error?: string;
}

async function run(client: Client, topic: string, workload: 'batches' | 'gateway'): Promise<RunResult> {
  const payloads = values(options.messages);
  const keys = payloads.map((_, i) => `bench-site:visitor-${i % 997}`);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const latencies: number[] = [];
  let error: string | undefined;
  try {
    if (workload === 'batches') {
      for (let i = 0; i < payloads.length; i += 1000) {
        const messages = payloads.slice(i, i + 1000).map((value, j) => ({ key: keys[i + j] ?? null, value }));
        await client.send([{ topic, messages }]);
      }
    } else {
      const batcher = new LingerBatcher((topicMessages) => client.send(topicMessages), {
        lingerMs: 2,
        maxPendingRecords: options.messages,
      });
      let next = 0;
      const appender = async () => {
        while (next < payloads.length) {
          const i = next++;
          const at = performance.now();
          await batcher.send([{ topic, key: keys[i] ?? null, value: payloads[i] ?? null }]);
          latencies.push(performance.now() - at);
        }
      };
      await Promise.all(Array.from({ length: options.concurrency }, appender));
      await batcher.close?.();
    }
  } catch (e) {
    error = (e as Error).message;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round((latencies[Math.floor(q * (latencies.length - 1))] ?? 0) * 10) / 10;
  return {
    messagesPerSecond: Math.round(options.messages / seconds),
    cpuMicrosPerMessage: Math.round(((cpu.user + cpu.system) / options.messages) * 10) / 10,
    ...(workload === 'gateway' && { appendP50Ms: at(0.5), appendP99Ms: at(0.99) }),
    stored: await topicHolds(topic),
    ...(error && { error }),
  };
}

const admin = kafka.admin();
await admin.connect();
const runId = randomUUID().slice(0, 8);
const created: string[] = [];
const results: Record<string, unknown>[] = [];

async function topicOfItsOwn(): Promise<string> {
  const topic = `bench-clients-${runId}-${created.length}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: options.partitions }], waitForLeaders: true });
  created.push(topic);
  return topic;
}

try {
  // Warm-up, not counted: each client's code compiled by V8 and its connections made once.
  for (const make of [kafkajsClient, platformaticClient]) {
    const client = await make('none');
    if (client) {
      await run(client, await topicOfItsOwn(), 'batches');
      await client.close();
    }
  }
  for (const codec of options.codecs.split(',') as Codec[]) {
    for (const workload of ['batches', 'gateway'] as const) {
      const runs: Record<string, RunResult[]> = {};
      const versions: Record<string, string> = {};
      for (let repeat = 0; repeat < options.repeat; repeat++) {
        for (const make of [kafkajsClient, platformaticClient]) {
          const client = await make(codec);
          if (!client) continue;
          versions[client.name] = client.version;
          const result = await run(client, await topicOfItsOwn(), workload);
          await client.close();
          runs[client.name] = [...(runs[client.name] ?? []), result];
          log(`${codec} ${workload} ${client.name}: ${JSON.stringify(result)}`);
        }
      }
      for (const [name, list] of Object.entries(runs)) {
        results.push({
          codec,
          workload,
          client: `${name} ${versions[name]}`,
          messagesPerSecond: spread(list.map((r) => r.messagesPerSecond)),
          cpuMicrosPerMessage: spread(list.map((r) => r.cpuMicrosPerMessage)),
          ...(workload === 'gateway' && {
            appendP50Ms: spread(list.map((r) => r.appendP50Ms ?? 0)),
            appendP99Ms: spread(list.map((r) => r.appendP99Ms ?? 0)),
          }),
          allStoredOnce: list.every((r) => r.stored === options.messages && !r.error),
          problems: list.flatMap((r) =>
            r.stored !== options.messages || r.error
              ? [`stored ${r.stored}${r.error ? `: ${r.error}` : ''}`]
              : [],
          ),
        });
      }
    }
  }
} finally {
  await admin.deleteTopics({ topics: created, timeout: 30_000 }).catch(() => {});
  await admin.disconnect();
}
console.log(
  JSON.stringify(
    { machine: machineInfo(), load: loadSnapshot(), options: { ...options, brokers }, results },
    null,
    2,
  ),
);
