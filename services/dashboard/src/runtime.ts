// startDashboard: opens what the dashboard needs (the state store: LMDB in TALLY_DATA_DIR or Redis; the
// read keys of the token store; the warehouse, unless the caller hands it one), builds it and listens on
// DASHBOARD_HOST:DASHBOARD_PORT. Its own process (main.ts) reads a ClickHouse server (CLICKHOUSE_URL) or,
// beside a running `npm start`, the warehouse endpoint that process publishes; `npm start` runs it in its
// main process with a connection of its own on the embedded warehouse's directory. Once it listens, it
// warms the revenue caches in the background (revenue-warmer.ts).
import { resolve } from 'node:path';
import type { TallyConfig } from '@tally/config';
import {
  openStateStore,
  ProjectStore,
  RefusalCounts,
  Sessions,
  ShareLinks,
  SignInFailures,
  Users,
} from '@tally/dashboard-store';
import { FileTokenStore, RedisTokenStore, type TokenStore, TokenVerifier } from '@tally/tokens';
import {
  embeddedWarehouseDir,
  migrate,
  openChdbWarehouse,
  openClickHouseWarehouse,
  type Warehouse,
} from '@tally/warehouse';
import { endpointUrl, readPublishedEndpoint } from '@tally/warehouse-http';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import { buildDashboard } from './dashboard.ts';
import type { ConsumerStates, HealthLog } from './deps.ts';
import { ownHealthLog } from './health-log.ts';
import { type RevenueWarmer, startRevenueWarmer } from './revenue-warmer.ts';

/** Attempts (sign-in, password links, share passwords) per client address per 15 minutes. */
export const ATTEMPTS_PER_WINDOW = 10;
export const ATTEMPT_WINDOW_MS = 15 * 60_000;

export interface RunningDashboard {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export interface StartDashboardOptions {
  /** A warehouse the caller opened and closes (npm start's own connection). */
  warehouse?: Warehouse;
  logger?: Logger;
  /** The record log of the process (npm start), for the health view; without it the dashboard opens its own. */
  log?: HealthLog;
  /** The consumers of the process (npm start), whose stalls the health view shows as they tell them. */
  consumers?: ConsumerStates;
}

/** The warehouse of a dashboard process of its own: the server, else the running Tally's endpoint, else chDB. */
export async function openDashboardWarehouse(config: TallyConfig): Promise<Warehouse> {
  const database = config.CLICKHOUSE_DATABASE;
  if (config.CLICKHOUSE_URL) {
    return openClickHouseWarehouse({
      url: config.CLICKHOUSE_URL,
      database,
      cluster: config.CLICKHOUSE_CLUSTER,
    });
  }
  const dataDir = resolve(config.TALLY_DATA_DIR);
  const endpoint = readPublishedEndpoint(dataDir);
  if (endpoint) return openClickHouseWarehouse({ url: endpointUrl(endpoint), database });
  return openChdbWarehouse({ dataDir: embeddedWarehouseDir(dataDir), database });
}

export async function startDashboard(
  config: TallyConfig,
  options: StartDashboardOptions = {},
): Promise<RunningDashboard> {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL, base: { service: 'dashboard' } });
  const dataDir = resolve(config.TALLY_DATA_DIR);
  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, { connectTimeout: 2000, maxRetriesPerRequest: 1 })
    : null;
  redis?.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const store = openStateStore({ ...config, TALLY_DATA_DIR: dataDir });
  const tokenStore: TokenStore = redis
    ? new RedisTokenStore(redis, config.REDIS_KEY_PREFIX)
    : new FileTokenStore(dataDir);
  const readKeys = new TokenVerifier(tokenStore, {
    refreshMs: config.TOKEN_REFRESH_MS,
    kinds: ['read'],
    onError: (error) => logger.warn({ err: error }, 'token refresh failed; keeping the keys loaded before'),
  });
  const ownLog = options.log ? null : ownHealthLog({ ...config, TALLY_DATA_DIR: dataDir });
  const ownsWarehouse = !options.warehouse;
  let warehouse: Warehouse | null = options.warehouse ?? null;
  let app: FastifyInstance | null = null;
  let warmer: RevenueWarmer | null = null;
  const closeAll = async () => {
    await app?.close();
    await warmer?.stop();
    await ownLog?.close();
    readKeys.stop();
    if (ownsWarehouse) await warehouse?.close();
    await store.close();
    await tokenStore.close();
    redis?.disconnect();
  };
  let url: string;
  try {
    await readKeys.start();
    if (!warehouse) {
      warehouse = await openDashboardWarehouse(config);
      // Alone (compose), it may start before the consumers: the tables it reads must exist (idempotent).
      await migrate(warehouse);
    }
    app = await buildDashboard(
      {
        config,
        warehouse,
        users: new Users(store),
        sessions: new Sessions(store),
        shares: new ShareLinks(store),
        projects: new ProjectStore(store),
        readKeys,
        tokens: tokenStore,
        attemptLimit: { max: ATTEMPTS_PER_WINDOW, timeWindow: ATTEMPT_WINDOW_MS },
        signInFailures: new SignInFailures(store),
        log: options.log ?? (ownLog as HealthLog),
        ...(options.consumers && { consumers: options.consumers }),
        refusals: new RefusalCounts(store),
      },
      { logger, redis },
    );
    url = await app.listen({ port: config.DASHBOARD_PORT, host: config.DASHBOARD_HOST });
    warmer = startRevenueWarmer(warehouse, logger);
  } catch (error) {
    await closeAll().catch(() => {});
    throw error;
  }
  let closing: Promise<void> | null = null;
  return {
    app,
    url: url.replace('0.0.0.0', '127.0.0.1'),
    close() {
      closing ??= closeAll();
      return closing;
    },
  };
}
