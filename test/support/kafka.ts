// Helpers for tests against real Kafka: read a topic back through the schema registry, and run a broker
// of the test's own (infra/kafka on other ports and another data directory) that a test may stop.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import kafkajs from 'kafkajs';
import SnappyCodec from 'kafkajs-snappy';
import { inject } from 'vitest';
import { ROOT } from './processes.ts';

const { CompressionCodecs, CompressionTypes, Kafka, logLevel } = kafkajs;
// The gateway compresses with snappy (KAFKA_COMPRESSION); kafkajs reads it only with the codec registered
// in this process. (It used to be registered as a side effect of importing @tally/log, which now loads its
// Kafka client only when a Kafka log is opened.)
CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;

const run = promisify(execFile);

export interface RawMessage {
  key: string;
  partition: number;
  offset: number;
  value: Buffer;
  decoded: Record<string, unknown>;
}

/**
 * Reads `topic` from the beginning with a plain kafkajs consumer and decodes each value through the
 * registry, until `done(messages)` holds or `timeoutMs` passes.
 */
export async function readTopic(
  brokers: string,
  registryUrl: string,
  topic: string,
  done: (messages: RawMessage[]) => boolean,
  timeoutMs = 30_000,
): Promise<RawMessage[]> {
  const kafka = new Kafka({ clientId: 'tally-test-reader', brokers: [brokers], logLevel: logLevel.NOTHING });
  const registry = new SchemaRegistry({ host: registryUrl });
  const consumer = kafka.consumer({ groupId: `reader-${Math.random()}`, maxWaitTimeInMs: 100 });
  const messages: RawMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      if (!message.value) return;
      messages.push({
        key: message.key?.toString() ?? '',
        partition,
        offset: Number(message.offset),
        value: message.value,
        decoded: (await registry.decode(message.value)) as Record<string, unknown>,
      });
      if (done(messages)) finish();
    },
  });
  const timer = setTimeout(finish, timeoutMs);
  await finished;
  clearTimeout(timer);
  await consumer.disconnect();
  return messages;
}

export interface OwnBroker {
  brokers: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  remove(): Promise<void>;
}

/**
 * `count` ports that no one listens on now, picked at random below Linux's ephemeral range (32768 and up),
 * so that no client connection takes one while the broker is stopped and it can restart on the same port.
 */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!ports.includes(port) && (await canListen(port))) ports.push(port);
  }
  return ports;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A broker of this test's own on free ports (not fixed ones: another suite on the same machine may run the
 * same test at the same time), sharing the installed jars, with its own data.
 */
export async function ownBroker(): Promise<OwnBroker> {
  const [port, controllerPort] = (await freePorts(2)) as [number, number];
  const shared = process.env.TALLY_INFRA_HOME ?? join(homedir(), '.cache', 'tally-infra');
  await run('bash', [join(ROOT, 'infra/kafka/install.sh')]);
  const home = mkdtempSync(join(tmpdir(), 'tally-kafka-own-'));
  mkdirSync(join(home, 'kafka'));
  symlinkSync(join(shared, 'kafka', 'libs'), join(home, 'kafka', 'libs'));
  const env = {
    ...process.env,
    TALLY_INFRA_HOME: home,
    KAFKA_PORT: String(port),
    KAFKA_CONTROLLER_PORT: String(controllerPort),
  };
  const script = (name: string) =>
    run('bash', [join(ROOT, `infra/kafka/${name}.sh`)], { env, timeout: 180_000 });
  await script('start');
  return {
    brokers: `127.0.0.1:${port}`,
    stop: async () => void (await script('stop')),
    start: async () => void (await script('start')),
    remove: async () => {
      await script('stop');
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Options of a Kafka log on the test services, on topics of its own. */
export const kafkaLogOptions = (topicPrefix = `test-${randomUUID().slice(0, 8)}.`) => ({
  brokers: [inject('kafkaBrokers')],
  schemaRegistryUrl: inject('schemaRegistryUrl'),
  topicPrefix,
  partitions: 3,
  replicationFactor: 1,
  compression: 'snappy' as const,
  lingerMs: 2,
  compatibility: 'BACKWARD' as const,
});
