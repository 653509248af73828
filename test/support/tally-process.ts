// Starts `npm start`'s all-in-one process (services/embedded: gateway, record log, both consumers and
// the embedded chDB warehouse) for end-to-end tests, on free ports of 127.0.0.1, and reads its
// warehouse through the query endpoint it publishes, as the tally CLI does.

import { randomUUID } from 'node:crypto';
import { openClickHouseWarehouse, type Warehouse } from '@tally/warehouse';
import { endpointUrl, readPublishedEndpoint } from '@tally/warehouse-http';
import { inject } from 'vitest';
import { type GatewayProcess, spawnTallyService } from './processes.ts';

/** The all-in-one process: the same handle as the gateway's. */
export type TallyProcess = GatewayProcess;

/**
 * Settings every child gets: the test's own, never the developer's shell's (a CLICKHOUSE_URL there
 * would send the CLI to another warehouse; '' unsets a setting).
 */
export function pipelineEnv(env: Record<string, string>): Record<string, string> {
  return {
    PORT: '0',
    ADMIN_PORT: '0',
    DASHBOARD_PORT: '0',
    DASHBOARD_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    CLICKHOUSE_URL: '',
    CLICKHOUSE_DATABASE: 'tally',
    REDIS_URL: '',
    KAFKA_BROKERS: '',
    SCHEMA_REGISTRY_URL: '',
    CONSUMER_BATCH_WAIT_MS: '50',
    REVENUE_BATCH_WAIT_MS: '50',
    RATE_LIMIT_PER_HOUR: '1000000',
    ...env,
  };
}

/**
 * The record logs a pipeline test runs on: the embedded log, and Kafka on topics of the test's own (with
 * `partitions: 1`, one partition per topic, so that a sentinel sent last is consumed after everything sent
 * before it, as on the embedded log). Each entry: a name for the test title, and the settings to start with.
 */
export function pipelineBackends(options: { partitions?: number } = {}) {
  return [
    ['the embedded log', () => ({})],
    [
      'Kafka',
      () => ({
        KAFKA_BROKERS: inject('kafkaBrokers'),
        SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl'),
        KAFKA_TOPIC_PREFIX: `test-${randomUUID().slice(0, 8)}.`,
        ...(options.partitions && { KAFKA_PARTITIONS: String(options.partitions) }),
      }),
    ],
  ] as const;
}

/**
 * Starts the all-in-one process: from its sources unless `entry` names the compiled one
 * (services/embedded/dist/main.js, what `npm start` runs).
 */
export function startTallyProcess(
  env: Record<string, string>,
  entry = 'services/embedded/src/main.ts',
): Promise<TallyProcess> {
  const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
  return spawnTallyService(entry, { ...inherited, ...pipelineEnv(env) }, 60_000);
}

/** The warehouse of a running process, through the endpoint it published in its data directory. */
export async function publishedWarehouse(dataDir: string): Promise<Warehouse> {
  const endpoint = readPublishedEndpoint(dataDir);
  if (!endpoint) throw new Error(`no running process publishes a warehouse endpoint in ${dataDir}`);
  return openClickHouseWarehouse({ url: endpointUrl(endpoint), database: 'tally' });
}

export const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';

/** POSTs one record as a browser would (a real browser's User-Agent, so it is not counted as a bot). */
export async function send(
  url: string,
  token: string,
  body: { type: string; id?: string; data: unknown },
  userAgent = BROWSER,
): Promise<Response> {
  return fetch(`${url}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': token, 'user-agent': userAgent },
    body: JSON.stringify(body),
  });
}
