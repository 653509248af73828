// The gateway publishing to a real Kafka broker through a real schema registry: Avro records in the
// Confluent wire format that decode back field for field, order per key, 503 (never 202) while the
// broker is down and nothing acknowledged lost, and a SIGTERM that flushes what is in flight.
import { randomUUID } from 'node:crypto';
import { type IngestRecord, RECORD_TYPES, type RecordType } from '@tally/contract';
import { reusePortSupported } from '@tally/gateway';
import { admittedByWorker, localConfig, startCountingThreads, testGateway } from '@tally/gateway/testing';
import { fromAvroValue, openKafkaLog, type RecordLog, topicName } from '@tally/log';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { kafkaLogOptions, ownBroker, readTopic } from './support/kafka.ts';
import { startGatewayProcess, tempDataDir } from './support/processes.ts';

const brokers = inject('kafkaBrokers');
const registryUrl = inject('schemaRegistryUrl');

const bodies: Record<RecordType, Record<string, unknown>> = {
  pageview: {
    session_id: 's1',
    visitor_fingerprint: 'fp1',
    url: 'https://shop.example/pricing?utm_source=news',
    path: '/pricing',
    referrer: 'https://www.google.com/',
    title: 'Pricing',
    locale: 'en-US',
    utm_source: 'news',
    utm_term: 'shoes', // not in the contract: kept
    timestamp: Date.UTC(2026, 0, 5, 10),
  },
  event: {
    session_id: 's1',
    event_name: 'signup',
    event_data: { plan: 'pro', seats: 3, tags: ['a'] },
    path: '/x',
  },
  identify: { session_id: 's1', visitor_fingerprint: 'fp1', customer_id: 'cus_1' },
  revenue: {
    visitor_fingerprint: 'fp1',
    session_id: 's1',
    customer_id: 'cus_1',
    amount: 49.5,
    currency: 'eur',
    transaction_id: 'in_1',
    event_type: 'subscription',
    mrr_impact: 49.5,
    is_recurring: true,
    customer_subscription_id: 'sub_1',
    payment_processor: 'stripe',
    metadata: { plan: 'pro', interval: 'monthly' },
  },
};

async function withKafkaGateway<T>(
  env: Record<string, string>,
  options: { brokers?: string; topicPrefix?: string },
  body: (ctx: {
    post: (type: RecordType, data: unknown, id?: string) => Promise<number>;
    prefix: string;
  }) => Promise<T>,
): Promise<T> {
  const prefix = options.topicPrefix ?? `test-${randomUUID().slice(0, 8)}.`;
  const log: RecordLog = await openKafkaLog({
    ...kafkaLogOptions(prefix),
    brokers: [options.brokers ?? brokers],
  });
  const gw = await testGateway({ RATE_LIMIT_PER_HOUR: '1000000', ...env }, { openLog: () => log });
  const post = async (type: RecordType, data: unknown, id?: string) =>
    (
      await gw.app.inject({
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/json', 'x-api-token': gw.secretToken },
        payload: JSON.stringify({ type, id, data }),
      })
    ).statusCode;
  try {
    return await body({ post, prefix });
  } finally {
    await gw.close();
  }
}

describe('gateway on Kafka', () => {
  it('publishes each record type as Avro through the registry, decoding back field for field', async () => {
    await withKafkaGateway({}, {}, async ({ post, prefix }) => {
      const ids = Object.fromEntries(RECORD_TYPES.map((t) => [t, randomUUID()])) as Record<
        RecordType,
        string
      >;
      for (const type of RECORD_TYPES) expect(await post(type, bodies[type], ids[type])).toBe(202);

      for (const type of RECORD_TYPES) {
        const topic = topicName(prefix, type);
        const [message] = await readTopic(brokers, registryUrl, topic, (m) => m.length >= 1);
        expect(message, topic).toBeDefined();
        // Confluent wire format: magic byte 0, then the registered schema id.
        const subject = (await (
          await fetch(`${registryUrl}/subjects/${topic}-value/versions/latest`)
        ).json()) as { id: number };
        expect(message?.value[0]).toBe(0);
        expect(message?.value.readInt32BE(1)).toBe(subject.id);
        const config = (await (await fetch(`${registryUrl}/config/${topic}-value`)).json()) as {
          compatibilityLevel: string;
        };
        expect(config.compatibilityLevel).toBe('BACKWARD');

        const record = fromAvroValue(type, message?.decoded as Record<string, unknown>) as IngestRecord;
        const sent = { ...bodies[type] };
        if (type === 'revenue') sent.currency = 'EUR';
        if (type === 'event') sent.visitor_fingerprint = record.data.visitor_fingerprint; // derived by the server
        expect(record.data).toEqual(sent);
        expect(record).toMatchObject({
          id: ids[type],
          type,
          project_id: 'test-project',
          user_agent: 'lightMyRequest',
        });
        expect(record.visitor_fingerprint_derived).toBe(type === 'event');
        expect(record.timestamp).toBe(type === 'pageview' ? Date.UTC(2026, 0, 5, 10) : record.received_at);
        // One customer's revenue, one visitor's records (the visitor the client named, or the one the
        // gateway derived) share a key, hence a partition: so do a record's retries.
        const key = type === 'revenue' ? 'cus_1' : record.data.visitor_fingerprint;
        expect(message?.key).toBe(`test-project:${key}`);
      }
    });
  });

  it("keeps one customer's revenue records in the order they were accepted", async () => {
    await withKafkaGateway({}, {}, async ({ post, prefix }) => {
      const sent: string[] = [];
      for (let i = 0; i < 40; i++) {
        const customer = `cus_${i % 4}`;
        const transaction = `in_${i}`;
        expect(
          await post('revenue', {
            ...bodies.revenue,
            customer_id: customer,
            transaction_id: transaction,
            amount: i + 1,
          }),
        ).toBe(202);
        sent.push(`${customer}/${transaction}`);
      }
      const messages = await readTopic(
        brokers,
        registryUrl,
        topicName(prefix, 'revenue'),
        (m) => m.length >= 40,
      );
      expect(messages).toHaveLength(40);
      for (let c = 0; c < 4; c++) {
        const ofCustomer = messages.filter((m) => m.key === `test-project:cus_${c}`);
        expect(new Set(ofCustomer.map((m) => m.partition)).size).toBe(1);
        const got = ofCustomer
          .sort((a, b) => a.offset - b.offset)
          .map((m) => {
            const data = (m.decoded.data ?? {}) as Record<string, unknown>;
            return `${data.customer_id}/${data.transaction_id}`;
          });
        expect(got).toEqual(sent.filter((s) => s.startsWith(`cus_${c}/`)));
      }
    });
  });
});

describe('gateway on Kafka when the broker stops', () => {
  let broker: Awaited<ReturnType<typeof ownBroker>> | undefined;
  afterAll(async () => {
    await broker?.remove();
  });

  it('answers 503 (never 202) while the broker is down, 202 again after it restarts, and loses nothing it acknowledged', async () => {
    broker = await ownBroker();
    const own = broker;
    await withKafkaGateway(
      { APPEND_TIMEOUT_MS: '1500' },
      { brokers: own.brokers },
      async ({ post, prefix }) => {
        const acknowledged: string[] = [];
        const send = async () => {
          const id = randomUUID();
          const status = await post(
            'event',
            { session_id: 's', event_name: 'e', visitor_fingerprint: id },
            id,
          );
          if (status === 202) acknowledged.push(id);
          return status;
        };
        for (let i = 0; i < 20; i++) expect(await send()).toBe(202);

        await own.stop();
        const whileDown: number[] = [];
        for (let i = 0; i < 5; i++) whileDown.push(await send());
        expect(whileDown.every((s) => s === 503)).toBe(true);

        await own.start();
        const deadline = Date.now() + 60_000;
        let status = 0;
        while (status !== 202 && Date.now() < deadline) status = await send();
        expect(status).toBe(202);
        for (let i = 0; i < 20; i++) expect(await send()).toBe(202);

        const want = new Set(acknowledged);
        const messages = await readTopic(
          own.brokers,
          registryUrl,
          topicName(prefix, 'event'),
          (m) => [...want].every((id) => m.some((x) => x.decoded.id === id)),
          60_000,
        );
        const count = (id: string) => messages.filter((m) => m.decoded.id === id).length;
        expect(acknowledged.filter((id) => count(id) !== 1)).toEqual([]);
      },
    );
  });
});

describe('gateway process on Kafka', () => {
  it('flushes the records in flight on SIGTERM before it exits', async () => {
    const dataDir = tempDataDir();
    const { token } = await new FileTokenStore(dataDir).create('sigterm', 'public');
    const prefix = `test-${randomUUID().slice(0, 8)}.`;
    const gateway = await startGatewayProcess({
      TALLY_DATA_DIR: dataDir,
      KAFKA_BROKERS: brokers,
      SCHEMA_REGISTRY_URL: registryUrl,
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_LINGER_MS: '50', // a long linger, so that records are waiting in the batch at SIGTERM
      RATE_LIMIT_PER_HOUR: '1000000',
    });
    const ids = Array.from({ length: 100 }, () => randomUUID());
    const responses = ids.map((id) =>
      fetch(`${gateway.url}/api/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': token },
        body: JSON.stringify({ type: 'pageview', id, data: { session_id: id } }),
      }).then(
        (r) => r.status,
        () => 0,
      ),
    );
    // SIGTERM as soon as the first linger batch is acknowledged: the later requests are still in flight.
    await Promise.race(responses.map((r) => r.then((s) => (s === 202 ? s : new Promise(() => {})))));
    const exitCode = gateway.stop('SIGTERM');
    const statuses = await Promise.all(responses);
    expect(await exitCode).toBe(0);
    const acknowledged = ids.filter((_, i) => statuses[i] === 202);
    expect(acknowledged.length).toBeGreaterThan(0);
    const messages = await readTopic(brokers, registryUrl, topicName(prefix, 'pageview'), (m) =>
      acknowledged.every((id) => m.some((x) => x.decoded.id === id)),
    );
    expect(acknowledged.filter((id) => !messages.some((m) => m.decoded.id === id))).toEqual([]);
  });
});

// Two event loops on Kafka, in both layouts of the standalone gateway (gateway-service.ts): two loop
// threads beside a main thread that holds no log (a roomy machine), and, in a container short of a third
// isolate, the main thread serving the first loop itself beside one thread. On Kafka each loop has its
// own producer; every record answered 202 by either loop is in its topic exactly once.
describe('the standalone gateway with two loops on Kafka', () => {
  const layouts = [
    { layout: 'two loop threads', host: { cores: 2, memoryMiB: 24_000 }, threads: 2 },
    { layout: 'the main thread one of the loops (256 MiB)', host: { cores: 2, memoryMiB: 256 }, threads: 1 },
  ];
  it.skipIf(!reusePortSupported()).each(layouts)(
    `publishes what each loop accepted, once: $layout${reusePortSupported() ? '' : ` (skipped: Node.js ${process.versions.node} has no reusePort)`}`,
    async ({ host, threads }) => {
      const dataDir = tempDataDir();
      const { token } = await new FileTokenStore(dataDir).create('two-loops', 'public');
      const prefix = `test-${randomUUID().slice(0, 8)}.`;
      const config = localConfig(dataDir, {
        GATEWAY_WORKERS: '2',
        KAFKA_BROKERS: brokers,
        SCHEMA_REGISTRY_URL: registryUrl,
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_PARTITIONS: '3',
        RATE_LIMIT_PER_HOUR: '1000000',
      });
      const { gateway, threads: threadsStarted } = await startCountingThreads(config, host);
      let closed = false;
      try {
        expect(gateway.workers).toBe(2);
        expect(threadsStarted).toBe(threads);
        // New connections in each round: the kernel spreads them over both loops' listening sockets.
        const ids: string[] = [];
        for (let round = 0; round < 4; round++) {
          const statuses = await Promise.all(
            Array.from({ length: 30 }, async () => {
              const id = randomUUID();
              ids.push(id);
              const res = await fetch(`${gateway.url}/api/ingest`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'x-api-token': token, connection: 'close' },
                body: JSON.stringify({
                  type: 'pageview',
                  id,
                  data: { session_id: id, url: 'https://example.com/' },
                }),
              });
              await res.arrayBuffer();
              return res.status;
            }),
          );
          expect(statuses.filter((s) => s !== 202)).toEqual([]);
        }
        const perWorker = admittedByWorker(await (await fetch(`${gateway.adminUrl}/metrics`)).text());
        expect(perWorker['0']).toBeGreaterThan(0);
        expect(perWorker['1']).toBeGreaterThan(0);
        expect((perWorker['0'] ?? 0) + (perWorker['1'] ?? 0)).toBe(ids.length);
        expect((await fetch(`${gateway.adminUrl}/readyz`)).status).toBe(200);

        await gateway.close();
        closed = true;
        const want = new Set(ids);
        const messages = await readTopic(brokers, registryUrl, topicName(prefix, 'pageview'), (m) =>
          [...want].every((id) => m.some((x) => x.decoded.id === id)),
        );
        const count = (id: string) => messages.filter((m) => m.decoded.id === id).length;
        expect(ids.filter((id) => count(id) !== 1)).toEqual([]);
        expect(messages).toHaveLength(ids.length);
      } finally {
        if (!closed) await gateway.close();
      }
    },
  );
});
