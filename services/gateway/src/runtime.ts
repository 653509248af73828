// startGateway: opens what the configuration names (embedded record log; Redis or the data directory for
// tokens, rate limits and salts), builds the public server and (unless the caller serves it) the admin
// server, listens, and closes it all in order. main.ts calls it; end-to-end tests call it with their own
// config; npm start's gateway thread calls it without the admin server, which its main thread serves.
import { resolve } from 'node:path';
import type { TallyConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import { buildAdmin, watchLogSettings } from '@tally/service';
import { openStateStore, RefusalCounts } from '@tally/state-store';
import { FileTokenStore, RedisTokenStore, type TokenStore, TokenVerifier } from '@tally/tokens';
import type { FastifyInstance } from 'fastify';
import { type Logger, pino } from 'pino';
import { openCountryLookup } from './country.ts';
import { buildGateway } from './gateway.ts';
import type { IpConnectionTable } from './ip-connections.ts';
import { GatewayMetrics } from './metrics.ts';
import { RefusalCounter } from './refusals.ts';
import type { SharedRateLimitTable } from './shared-rate-limits.ts';
import { FileSaltStore, RedisSaltStore, VisitorIds } from './visitor-id.ts';

export interface RunningGateway {
  app: FastifyInstance;
  /** The admin server; null when the caller serves the admin port (see StartGatewayOptions.admin). */
  admin: FastifyInstance | null;
  /** Base URL of the public API, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Base URL of the admin server; null without one. */
  adminUrl: string | null;
  /** The gateway's record log (its health is the gateway's readiness). */
  log: RecordLog;
  metrics: GatewayMetrics;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  /** A record log the caller opened (and will close); by default the gateway opens the one the config names. */
  log?: RecordLog;
  /** Serve the admin port (default true); false when the caller serves it with the gateway's metrics. */
  admin?: boolean;
  /** The process's logger (by default one of the gateway's own, at LOG_LEVEL). */
  logger?: Logger;
  /** Close `log` with the gateway although the caller gave it (a gateway thread's port to its parent's log). */
  ownsLog?: boolean;
  /** Which of the gateway's event loops this is (GATEWAY_WORKERS; gateway-threads.ts). */
  worker?: string;
  /** Listen beside other event loops on the same port (gateway-threads.ts). */
  reusePort?: boolean;
  /** How many event loops of the process serve the port (default 1): they split GATEWAY_MAX_CONNECTIONS. */
  loops?: number;
  /** What the process's event loops share (gateway-threads.ts): rate-limit counters, the country database. */
  shared?: GatewayShared;
  /**
   * Compare the Kafka topics' settings with the configuration as the log opens, and log each difference
   * (default true; one event loop of a process does it, not each).
   */
  checkLogSettings?: boolean;
}

/** Memory a process's gateway event loops share instead of holding a copy each. */
export interface GatewayShared {
  /** The in-memory rate-limit counters (null with Redis, which holds them). */
  rateLimits: SharedRateLimitTable | null;
  /** The connections each client IP holds (GATEWAY_MAX_CONNECTIONS_PER_IP holds for the process). */
  ipConnections: IpConnectionTable;
  /** The country database's bytes (loadCountryDatabase). */
  countryDatabase: SharedArrayBuffer;
}

// Never log a token, a raw IP or a payload body.
const REQUEST_LOGGING = {
  serializers: { req: (req: { method: string; url: string }) => ({ method: req.method, url: req.url }) },
  redact: ['req.headers', 'req.body', 'req.ip', 'req.remoteAddress'],
};

export async function startGateway(
  config: TallyConfig,
  options: StartGatewayOptions = {},
): Promise<RunningGateway> {
  const logger = options.logger
    ? options.logger.child({}, REQUEST_LOGGING)
    : pino({ level: config.LOG_LEVEL, base: { service: 'gateway' }, ...REQUEST_LOGGING });
  const dataDir = resolve(config.TALLY_DATA_DIR);
  const prefix = config.REDIS_KEY_PREFIX;
  // ioredis is loaded only with Redis: each gateway thread holds its own copy of every module it loads.
  const redis = config.REDIS_URL
    ? new (await import('ioredis')).Redis(config.REDIS_URL, {
        connectTimeout: 2000,
        maxRetriesPerRequest: 1,
        lazyConnect: false,
        // Every request runs the rate limit's script: the commands of one event-loop turn go out in one
        // write (a pipeline) instead of one write each.
        enableAutoPipelining: true,
      })
    : null;
  redis?.on('error', (error) => logger.warn({ err: error }, 'redis error'));

  const tokenStore: TokenStore = redis ? new RedisTokenStore(redis, prefix) : new FileTokenStore(dataDir);
  const tokens = new TokenVerifier(tokenStore, {
    refreshMs: config.TOKEN_REFRESH_MS,
    // Read keys are the dashboard's: to the gateway they are unknown tokens (401 Invalid API token).
    kinds: ['public', 'secret'],
    onError: (error) => logger.warn({ err: error }, 'token refresh failed; keeping the tokens loaded before'),
  });
  const visitorIds = new VisitorIds(redis ? new RedisSaltStore(redis, prefix) : new FileSaltStore(dataDir));
  // The dashboard's state store, shared with it as the token store is: where refusal counts go.
  const stateStore = openStateStore({ ...config, TALLY_DATA_DIR: dataDir });
  const refusals = new RefusalCounter(new RefusalCounts(stateStore), {
    flushMs: config.REFUSAL_FLUSH_MS,
    onWarning: (message, error) => logger.warn({ err: error }, message),
  });
  const ownsLog = !options.log || options.ownsLog === true;
  const metrics = new GatewayMetrics();
  let log: RecordLog | null = options.log ?? null;
  let app: FastifyInstance | null = null;
  let admin: FastifyInstance | null = null;
  /** Closes what is open, in order: also when the start fails half-way, so nothing is left behind. */
  const closeAll = async () => {
    await app?.close(); // stops accepting, waits for in-flight requests (their appends) to finish
    await admin?.close();
    await refusals.close(); // the requests answered since the last flush, after the last of them
    await stateStore.close();
    tokens.stop();
    if (ownsLog) await log?.close(); // releases the embedded log's writer lock
    await tokenStore.close();
    redis?.disconnect();
  };
  let url: string;
  let adminUrl: string | null = null;
  try {
    await tokens.start();
    log ??= await openRecordLog(
      { ...config, TALLY_DATA_DIR: dataDir },
      {
        onWarning: (message: string, error: unknown) =>
          error === undefined ? logger.warn(message) : logger.warn({ err: error }, message),
        writer: true,
        checkSettings: options.checkLogSettings ?? true,
        // One line when Kafka becomes unreachable (appends refused at once), one when it is back.
        onCircuitChange: ({ state, message }) =>
          state === 'open'
            ? logger.warn({ circuit: state }, message)
            : logger.info({ circuit: state }, message),
      },
    );
    const appLog = log;
    watchLogSettings(metrics.registry, appLog);
    app = await buildGateway({
      config,
      log: appLog,
      tokens,
      visitorIds,
      redis,
      redisPrefix: prefix,
      metrics,
      logger,
      refusals,
      ...(options.worker !== undefined && { worker: options.worker }),
      ...(options.loops !== undefined && { loops: options.loops }),
      ...(options.shared?.rateLimits && { rateLimits: options.shared.rateLimits }),
      ...(options.shared && { ipConnections: options.shared.ipConnections }),
      ...(options.shared && { countries: openCountryLookup(options.shared.countryDatabase) }),
    });
    admin =
      options.admin === false
        ? null
        : buildAdmin({ health: () => appLog.health(), metrics: () => metrics.registry.metrics(), logger });
    // reusePort is in Node's listen options from 22.12 (gateway-threads.ts checks); @types/node 20 lacks it.
    const listenOptions = {
      port: config.PORT,
      host: config.HOST,
      ...(options.reusePort && { reusePort: true }),
    };
    url = await app.listen(listenOptions);
    refusals.start();
    adminUrl = (await admin?.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST })) ?? null;
  } catch (error) {
    await closeAll().catch(() => {});
    throw error;
  }

  let closing: Promise<void> | null = null;
  return {
    app,
    admin,
    url: url.replace('0.0.0.0', '127.0.0.1'),
    adminUrl,
    log,
    metrics,
    close() {
      closing ??= closeAll();
      return closing;
    },
  };
}
