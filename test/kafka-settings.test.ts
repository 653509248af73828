// The operator's Kafka and schema-registry settings are theirs, against a real broker and registry:
// a subject's compatibility level set through the registry's API survives restarts of the gateway (and a
// CLI command), registrations are checked against the subject's level, `tally kafka compatibility` shows
// and sets it; a topic that differs from the configuration is reported by the process that opens the log
// (one line per difference, tally_kafka_topic_setting_mismatch) and by the dashboard's health view, which
// also flags a consumer group whose oldest record not landed nears its topic's retention.
import { randomUUID } from 'node:crypto';
import { openKafkaLog, topicName } from '@tally/log';
import { FileTokenStore } from '@tally/tokens';
import kafkajs from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { kafkaLogOptions } from './support/kafka.ts';
import {
  outputMatching,
  postIngest,
  spawnTallyService,
  startGatewayProcess,
  tally,
  tempDataDir,
} from './support/processes.ts';
import { pipelineEnv } from './support/tally-process.ts';

const { Kafka, logLevel } = kafkajs;
const brokers = inject('kafkaBrokers');
const registryUrl = inject('schemaRegistryUrl');
const JSON_TYPE = 'application/vnd.schemaregistry.v1+json';
const DAY_MS = 86_400_000;

/** The test process's environment without an env file of the developer's. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
  return inherited;
}

const newPrefix = () => `test-${randomUUID().slice(0, 8)}.`;

async function levelOf(subject: string): Promise<string | null> {
  const res = await fetch(`${registryUrl}/config/${subject}`);
  if (res.status === 404) return null;
  expect(res.status).toBe(200);
  return ((await res.json()) as { compatibilityLevel: string }).compatibilityLevel;
}

async function setLevel(subject: string, level: string): Promise<void> {
  const res = await fetch(`${registryUrl}/config/${subject}`, {
    method: 'PUT',
    headers: { 'content-type': JSON_TYPE },
    body: JSON.stringify({ compatibility: level }),
  });
  expect(res.status).toBe(200);
}

const kafkaEnv = (dataDir: string, prefix: string, env: Record<string, string> = {}) =>
  pipelineEnv({
    TALLY_DATA_DIR: dataDir,
    KAFKA_BROKERS: brokers,
    SCHEMA_REGISTRY_URL: registryUrl,
    KAFKA_TOPIC_PREFIX: prefix,
    ...env,
  });

describe('schema compatibility', () => {
  it("keeps the compatibility level an operator set across restarts of the gateway and the CLI's", async () => {
    const dataDir = tempDataDir();
    const prefix = newPrefix();
    const env = kafkaEnv(dataDir, prefix);
    const { token } = await new FileTokenStore(dataDir).create('compat', 'public');
    const subject = `${topicName(prefix, 'pageview')}-value`;

    let gateway = await startGatewayProcess(env);
    expect(await gateway.stop('SIGTERM')).toBe(0);
    // A subject without a level got SCHEMA_COMPATIBILITY at the first start.
    expect(await levelOf(subject)).toBe('BACKWARD');

    await setLevel(subject, 'FULL_TRANSITIVE'); // the operator's, through the registry's own API
    gateway = await startGatewayProcess(env);
    try {
      const res = await postIngest(gateway.url, { type: 'pageview', data: { session_id: 's' } }, token);
      expect(res.status).toBe(202);
    } finally {
      expect(await gateway.stop('SIGTERM')).toBe(0);
    }
    expect(await levelOf(subject)).toBe('FULL_TRANSITIVE');
    // Any process that opens the log registers the schemas: a CLI command too.
    expect(await tally(['dead-letters', 'list'], env)).toContain('no dead letters');
    expect(await levelOf(subject)).toBe('FULL_TRANSITIVE');
    // The other subjects kept the level they were given at the first start.
    expect(await levelOf(`${topicName(prefix, 'revenue')}-value`)).toBe('BACKWARD');
  });

  it('registers the schema only if it is compatible at the subject’s level; tally kafka compatibility shows and sets the levels', async () => {
    const prefix = newPrefix();
    const env = kafkaEnv(tempDataDir(), prefix);
    const identify = `${topicName(prefix, 'identify')}-value`;
    // Another schema registered under the subject before Tally's, at a level Tally's does not meet.
    const other = { type: 'record', name: 'Other', fields: [{ name: 'x', type: 'string' }] };
    const registered = await fetch(`${registryUrl}/subjects/${identify}/versions`, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE },
      body: JSON.stringify({ schema: JSON.stringify(other) }),
    });
    expect(registered.status).toBe(200);
    await setLevel(identify, 'FULL_TRANSITIVE');

    await expect(openKafkaLog(kafkaLogOptions(prefix))).rejects.toThrow(
      `the schema registry refused the schema of ${identify}: it is not FULL_TRANSITIVE-compatible`,
    );
    expect(await levelOf(identify)).toBe('FULL_TRANSITIVE'); // not lowered to let it through

    const shown = JSON.parse(await tally(['kafka', 'compatibility', '--json'], env)) as Array<{
      subject: string;
      compatibility: string | null;
    }>;
    // The registration stopped at identify: pageview and event were registered (and given the
    // configured level, having none), revenue and the dead letters not yet.
    expect(shown).toEqual([
      { subject: `${prefix}pageview-value`, compatibility: 'BACKWARD' },
      { subject: `${prefix}event-value`, compatibility: 'BACKWARD' },
      { subject: identify, compatibility: 'FULL_TRANSITIVE' },
      { subject: `${prefix}revenue-value`, compatibility: null },
      { subject: `${prefix}dead-letter-value`, compatibility: null },
    ]);
    expect(await tally(['kafka', 'compatibility'], env)).toMatch(
      new RegExp(`^${identify.replaceAll('.', '\\.')}\\s+FULL_TRANSITIVE$`, 'm'),
    );

    // The operator decides: no compatibility for identify. Then the log opens.
    expect(await tally(['kafka', 'compatibility', '--set', 'NONE', '--type', 'identify'], env)).toContain(
      'Set NONE on 1 subject(s).',
    );
    const log = await openKafkaLog(kafkaLogOptions(prefix));
    await log.close();

    const all = await tally(['kafka', 'compatibility', '--set', 'FULL'], env);
    expect(all).toContain('Set FULL on 5 subject(s).');
    for (const type of ['pageview', 'event', 'identify', 'revenue', 'dead-letter']) {
      expect(await levelOf(`${prefix}${type}-value`), type).toBe('FULL');
    }
    await expect(tally(['kafka', 'compatibility', '--set', 'SOMETIMES'], env)).rejects.toThrow(
      '--set takes one of BACKWARD',
    );
  });
});

describe('Kafka topic settings and retention', () => {
  it('reports topics that differ from the configuration (log line, metric, health view) and groups near retention', async () => {
    const dataDir = tempDataDir();
    const prefix = newPrefix();
    const env = kafkaEnv(dataDir, prefix, { KAFKA_PARTITIONS: '3', LOG_RETENTION_HOURS: '168' });
    const store = new FileTokenStore(dataDir);
    const { token } = await store.create('settings', 'public');
    const readKey = (await store.create('settings', 'read')).token;
    const pageview = topicName(prefix, 'pageview');
    const identify = topicName(prefix, 'identify');
    const event = topicName(prefix, 'event');

    const kafka = new Kafka({ clientId: 'tally-test', brokers: [brokers], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer();
    await admin.connect();
    await producer.connect();
    try {
      // Made by hand before Tally starts: pageview with one partition, identify kept for one day.
      await admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic: pageview,
            numPartitions: 1,
            configEntries: [{ name: 'retention.ms', value: String(7 * DAY_MS) }],
          },
          {
            topic: identify,
            numPartitions: 3,
            configEntries: [{ name: 'retention.ms', value: String(DAY_MS) }],
          },
        ],
      });

      const gateway = await startGatewayProcess(env);
      let dashboard: Awaited<ReturnType<typeof spawnTallyService>> | null = null;
      try {
        // The lines are written before the process tells it is ready; its output may arrive later.
        await outputMatching(gateway, new RegExp(`Kafka topic ${identify.replaceAll('.', '\\.')}:`), 10_000);
        await outputMatching(gateway, new RegExp(`Kafka topic ${pageview.replaceAll('.', '\\.')}:`), 10_000);
        const lines = gateway.output().split('\n');
        const about = (topic: string) => lines.filter((l) => l.includes(`Kafka topic ${topic}:`));
        expect(about(pageview)).toHaveLength(1);
        expect(about(pageview)[0]).toContain('partitions is 1, the configuration says 3 (KAFKA_PARTITIONS)');
        expect(about(identify)).toHaveLength(1);
        expect(about(identify)[0]).toContain(
          `retention.ms is ${DAY_MS}, the configuration says ${7 * DAY_MS} (LOG_RETENTION_HOURS)`,
        );
        expect(about(event)).toEqual([]); // created by Tally as configured

        const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
        const mismatchLines = metrics
          .split('\n')
          .filter((l) => l.startsWith('tally_kafka_topic_setting_mismatch{'));
        expect(mismatchLines.sort()).toEqual(
          [
            `tally_kafka_topic_setting_mismatch{topic="${identify}",setting="retention.ms"} 1`,
            `tally_kafka_topic_setting_mismatch{topic="${pageview}",setting="partitions"} 1`,
          ].sort(),
        );

        // A backlog for the group analytics: pageview records from 6.5 days ago (past 80% of its 7 days),
        // identify records from 21 hours ago (past 80% of its one day), event records from now (through
        // the gateway). The group committed nothing past them.
        const now = Date.now();
        const old = (type: string, ageMs: number) => ({
          key: 'k',
          value: Buffer.from(`not landed ${type}`),
          timestamp: String(now - ageMs),
        });
        await producer.send({ topic: pageview, messages: [old('pageview', 6.5 * DAY_MS)] });
        await producer.send({ topic: identify, messages: [old('identify', 21 * 3_600_000)] });
        const res = await postIngest(
          gateway.url,
          { type: 'event', data: { session_id: 's', event_name: 'e' } },
          token,
        );
        expect(res.status).toBe(202);
        const group = `${prefix}analytics`;
        for (const [topic, partitions] of [
          [pageview, 1],
          [identify, 3],
          [event, 3],
        ] as const) {
          await admin.setOffsets({
            groupId: group,
            topic,
            partitions: Array.from({ length: partitions }, (_, partition) => ({ partition, offset: '0' })),
          });
        }

        dashboard = await spawnTallyService(
          'services/dashboard/src/main.ts',
          { ...inheritedEnv(), ...env },
          60_000,
        );
        const answer = await fetch(`${dashboard.url}/api/v1/projects/settings/health`, {
          headers: { authorization: `Bearer ${readKey}` },
        });
        expect(answer.status, await answer.clone().text()).toBe(200);
        const health = (await answer.json()) as {
          consumer_groups: Array<{
            group: string;
            topic: string;
            lag: number;
            oldest_age_seconds: number | null;
            retention_seconds: number | null;
            near_retention: boolean;
          }>;
          log_settings: { mismatches: unknown[] } | null;
          unavailable: string[];
        };
        expect(health.unavailable).toEqual([]);
        expect(
          [...(health.log_settings?.mismatches ?? [])].sort((a, b) =>
            JSON.stringify(a) < JSON.stringify(b) ? -1 : 1,
          ),
        ).toEqual([
          {
            topic: identify,
            setting: 'retention.ms',
            expected: 7 * DAY_MS,
            actual: DAY_MS,
            configured_by: 'LOG_RETENTION_HOURS',
          },
          {
            topic: pageview,
            setting: 'partitions',
            expected: 3,
            actual: 1,
            configured_by: 'KAFKA_PARTITIONS',
          },
        ]);
        const row = (topic: string) =>
          health.consumer_groups.find((g) => g.group === 'analytics' && g.topic === topic);
        expect(row('pageview')).toMatchObject({
          lag: 1,
          retention_seconds: 7 * 86_400,
          near_retention: true,
        });
        expect(row('pageview')?.oldest_age_seconds).toBeGreaterThanOrEqual(6.5 * 86_400 - 1);
        // The topic's own retention (one day, the operator's), not the configured one, is what counts.
        expect(row('identify')).toMatchObject({ lag: 1, retention_seconds: 86_400, near_retention: true });
        expect(row('event')).toMatchObject({ lag: 1, retention_seconds: 7 * 86_400, near_retention: false });
      } finally {
        await dashboard?.stop('SIGTERM');
        expect(await gateway.stop('SIGTERM')).toBe(0);
      }
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });
});
