// The Kafka record log against a real Apache Kafka 4 broker and a real schema registry: the same
// conformance suite as the embedded log, each fixture on topics of its own.

import { openKafkaLog, topicName } from '@tally/log';
import { describeRecordLogConformance } from '@tally/log/conformance';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { expect, it } from 'vitest';
import { kafkaLogOptions } from './support/kafka.ts';

describeRecordLogConformance('Kafka', async () => {
  const options = kafkaLogOptions();
  let log = await openKafkaLog(options);
  return {
    log,
    async reopen() {
      await log.close();
      log = await openKafkaLog(options);
      return log;
    },
  };
});

it('creates its topics with the configured retention and min.insync.replicas', async () => {
  const options = { ...kafkaLogOptions(), retentionMs: 5 * 3_600_000 };
  const log = await openKafkaLog(options);
  const kafka = new Kafka({
    clientId: 'tally-test-admin',
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topicName(options.topicPrefix, 'revenue') }],
    });
    const entries = Object.fromEntries(
      (resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]),
    );
    expect(entries['retention.ms']).toBe(String(5 * 3_600_000));
    expect(entries['min.insync.replicas']).toBe('1');
  } finally {
    await admin.disconnect();
    await log.close();
  }
});
