// startGateway: opens what the configuration names (embedded record log; Redis or the data directory for
// tokens, rate limits and salts), builds the public server and (unless the caller serves it) the admin
// server, listens, and closes it all in order. main.ts calls it; end-to-end tests call it with their own
// config; npm start's gateway thread calls it without the admin server, which its main thread serves.
import type { TallyConfig } from '@tally/config';
import { type EnvironmentSharer, openRecordLog, type RecordLog } from '@tally/log';
import { buildAdmin, startOrUnwind, watchLogSettings } from '@tally/service';
import { openStateStore, RefusalCounts } from '@tally/state-store';
import { connectRedis, openTokenStore, TokenVerifier } from '@tally/tokens';
import type { FastifyInstance } from 'fastify';
import { type Logger, pino } from 'pino';
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
  /**
   * The process's other handle on the embedded log the gateway opens as its writer (npm start with one
   * loop: the consumers' log in the main thread), closed while the writer reopens its own to release pages.
   */
  logSharer?: EnvironmentSharer;
}

/** Memory a process's gateway event loops share instead of holding a copy each. */
export interface GatewayShared {
  /** The in-memory rate-limit counters (null with Redis, which holds them). */
  rateLimits: SharedRateLimitTable | null;
  /** The connections each client IP holds (GATEWAY_MAX_CONNECTIONS_PER_IP holds for the process). */
  ipConnections: IpConnectionTable;
  /** Set while the consumers of the process are too far behind (npm start: landingBehindFlag), else null. */
  landingBehind: Int32Array | null;
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
  const prefix = config.REDIS_KEY_PREFIX;
  // Closed in the reverse order of these steps: the server first (it stops accepting and waits for the
  // requests in flight, their appends), then the admin server, the log (its writer lock), the refusal
  // counts (the requests answered since the last flush) and the stores, the Redis connection last.
  return startOrUnwind(async (resources) => {
    const redis = resources.add(
      connectRedis(config, {
        onError: (error) => logger.warn({ err: error }, 'redis error'),
        // Every request runs the rate limit's script: the commands of one event-loop turn go out in one
        // write (a pipeline) instead of one write each.
        autoPipelining: true,
      }),
      (connection) => connection?.disconnect(),
    );
    const tokenStore = resources.add(openTokenStore(config, redis), (store) => store.close());
    const tokens = resources.add(
      new TokenVerifier(tokenStore, {
        refreshMs: config.TOKEN_REFRESH_MS,
        // Read keys are the dashboard's: to the gateway they are unknown tokens (401 Invalid API token).
        kinds: ['public', 'secret'],
        onError: (error) =>
          logger.warn({ err: error }, 'token refresh failed; keeping the tokens loaded before'),
      }),
      (verifier) => verifier.stop(),
    );
    const visitorIds = new VisitorIds(
      redis ? new RedisSaltStore(redis, prefix) : new FileSaltStore(config.dataDir),
    );
    // The state store, shared with the dashboard as the token store is: where refusal counts go.
    const stateStore = resources.add(openStateStore(config, redis), (store) => store.close());
    const refusals = resources.add(
      new RefusalCounter(new RefusalCounts(stateStore), {
        flushMs: config.REFUSAL_FLUSH_MS,
        onWarning: (message, error) => logger.warn({ err: error }, message),
      }),
      (counter) => counter.close(),
    );
    const metrics = new GatewayMetrics();
    await tokens.start();
    // A log the caller gave is the caller's to close, unless it says otherwise (a thread's port to its
    // parent's log); else the embedded log's writer lock is released with the gateway.
    const ownsLog = !options.log || options.ownsLog === true;
    const log = resources.add(
      options.log ??
        (await openRecordLog(config, {
          onWarning: (message: string, error: unknown) =>
            error === undefined ? logger.warn(message) : logger.warn({ err: error }, message),
          writer: true,
          // Its pages are released as the log grows; in npm start's one gateway thread, with the main
          // thread's handle (the consumers'), which closes meanwhile (logSharer).
          releasePages: true,
          ...(options.logSharer && { sharer: options.logSharer }),
          checkSettings: options.checkLogSettings ?? true,
          // One line when Kafka becomes unreachable (appends refused at once), one when it is back.
          onCircuitChange: ({ state, message }) =>
            state === 'open'
              ? logger.warn({ circuit: state }, message)
              : logger.info({ circuit: state }, message),
        })),
      (opened) => (ownsLog ? opened.close() : undefined),
    );
    watchLogSettings(metrics.registry, log);
    const admin =
      options.admin === false
        ? null
        : resources.add(
            buildAdmin({ health: () => log.health(), metrics: () => metrics.registry.metrics(), logger }),
            (server) => server.close(),
          );
    const app = resources.add(
      await buildGateway({
        config,
        log,
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
        ...(options.shared?.landingBehind && { landingBehind: options.shared.landingBehind }),
      }),
      (server) => server.close(),
    );
    // reusePort is in Node's listen options from 22.12 (gateway-threads.ts checks); @types/node 20 lacks it.
    const listenOptions = {
      port: config.PORT,
      host: config.HOST,
      ...(options.reusePort && { reusePort: true }),
    };
    const url = await app.listen(listenOptions);
    refusals.start();
    const adminUrl = (await admin?.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST })) ?? null;
    return {
      app,
      admin,
      url: url.replace('0.0.0.0', '127.0.0.1'),
      adminUrl,
      log,
      metrics,
      close: () => resources.close(),
    };
  });
}
