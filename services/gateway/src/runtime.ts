// startGateway: opens what the configuration names (embedded record log; Redis or the data directory for
// tokens, rate limits and salts), builds the public and admin servers, listens, and closes it all in
// order. main.ts calls it; end-to-end tests call it with their own config.
import { resolve } from 'node:path';
import type { TallyConfig } from '@tally/config';
import { openRecordLog, type RecordLog } from '@tally/log';
import { FileTokenStore, RedisTokenStore, type TokenStore, TokenVerifier } from '@tally/tokens';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildAdmin } from './admin.ts';
import { buildGateway } from './gateway.ts';
import { GatewayMetrics } from './metrics.ts';
import { FileSaltStore, RedisSaltStore, VisitorIds } from './visitor-id.ts';

export interface RunningGateway {
  app: FastifyInstance;
  admin: FastifyInstance;
  /** Base URL of the public API, e.g. http://127.0.0.1:8080 */
  url: string;
  adminUrl: string;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  /** A record log the caller opened (and will close); by default the gateway opens the one the config names. */
  log?: RecordLog;
}

export async function startGateway(
  config: TallyConfig,
  options: StartGatewayOptions = {},
): Promise<RunningGateway> {
  const logger = pino({
    level: config.LOG_LEVEL,
    base: { service: 'gateway' },
    // Never log a token, a raw IP or a payload body.
    serializers: { req: (req: { method: string; url: string }) => ({ method: req.method, url: req.url }) },
    redact: ['req.headers', 'req.body', 'req.ip', 'req.remoteAddress'],
  });
  const dataDir = resolve(config.TALLY_DATA_DIR);
  const prefix = config.REDIS_KEY_PREFIX;
  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, {
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
    onError: (error) => logger.warn({ err: error }, 'token refresh failed; keeping the tokens loaded before'),
  });
  await tokens.start();
  const visitorIds = new VisitorIds(redis ? new RedisSaltStore(redis, prefix) : new FileSaltStore(dataDir));
  const ownsLog = !options.log;
  const log: RecordLog =
    options.log ??
    (await openRecordLog(
      { ...config, TALLY_DATA_DIR: dataDir },
      { onWarning: (message: string, error: unknown) => logger.warn({ err: error }, message), writer: true },
    ));
  const metrics = new GatewayMetrics();

  const app = await buildGateway({
    config,
    log,
    tokens,
    visitorIds,
    redis,
    redisPrefix: prefix,
    metrics,
    logger,
  });
  const admin = buildAdmin({ log, metrics, logger });
  const url = await app.listen({ port: config.PORT, host: config.HOST });
  const adminUrl = await admin.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });

  let closing: Promise<void> | null = null;
  return {
    app,
    admin,
    url: url.replace('0.0.0.0', '127.0.0.1'),
    adminUrl,
    close() {
      closing ??= (async () => {
        await app.close(); // stops accepting, waits for in-flight requests (their appends) to finish
        await admin.close();
        tokens.stop();
        if (ownsLog) await log.close();
        await tokenStore.close();
        redis?.disconnect();
      })();
      return closing;
    },
  };
}
