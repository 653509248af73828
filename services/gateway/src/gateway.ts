// buildGateway: the public ingest API as a Fastify instance, built from a config and its dependencies so
// that tests can build one with their own. POST /api/ingest runs its checks in the order of the spec:
// rate limit (onRequest) → body parsing → token → revenue needs a secret token → validation → durable
// append → 202.
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { TallyConfig } from '@tally/config';
import { trustedProxies } from '@tally/config';
import { type RecordLog, withAppendTimeout } from '@tally/log';
import type { TokenVerifier } from '@tally/tokens';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Redis } from 'ioredis';
import secureJson from 'secure-json-parse';
import {
  BadRequestError,
  NotFoundError,
  RateLimitedError,
  ServiceUnavailableError,
  toIngestError,
} from './errors.ts';
import { clientIpOf, ingestRoute, UNAVAILABLE_RETRY_AFTER_S } from './ingest-route.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { VisitorIds } from './visitor-id.ts';

export interface GatewayDeps {
  config: TallyConfig;
  log: RecordLog;
  tokens: Pick<TokenVerifier, 'verify' | 'verifyFresh'>;
  visitorIds: VisitorIds;
  /** Rate-limit counters live here when given (shared by replicas), in memory otherwise. */
  redis?: Redis | null;
  /** Prefix of every Redis key (default `tally:`). */
  redisPrefix?: string;
  metrics?: GatewayMetrics;
  /** A pino logger; none (silent) by default, as in tests. */
  logger?: FastifyBaseLogger;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The record type named by the body, for metrics ('unknown' until the body is read). */
    recordType: string;
    /** request.ip once computed ('' before): see clientIpOf. */
    clientIp: string;
  }
}

export async function buildGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    trustProxy: trustedProxies(config),
    bodyLimit: config.BODY_LIMIT,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    logController: new LogController({ disableRequestLogging: true }),
    // Our own 503 while draining (below): Fastify's has neither our body nor Retry-After.
    return503OnClosing: false,
    // Slow clients (slowloris) are cut off: each phase of a connection has a bound (408, then closed).
    connectionTimeout: config.CONNECTION_TIMEOUT_MS,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    http: {
      // Node refuses a headers timeout above the request timeout; the request timeout bounds both anyway.
      headersTimeout: Math.min(config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS),
      // Node checks those two timeouts on this interval (30 s by default): check every second instead, so
      // that a slow client is cut off close to its timeout.
      connectionsCheckingInterval: 1000,
    },
  });
  app.decorateRequest('recordType', 'unknown');
  app.decorateRequest('clientIp', '');

  // navigator.sendBeacon sends the JSON envelope as text/plain: parse it exactly like application/json.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    ['application/json', 'text/plain'],
    { parseAs: 'string' },
    (_request, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );

  // CORS first, so that every response (429 and other errors included) carries the headers.
  await app.register(cors, {
    origin: '*',
    methods: ['POST'],
    allowedHeaders: ['Content-Type', 'X-API-Token'],
    exposedHeaders: ['Retry-After'],
    maxAge: 86_400,
  });

  // Draining (SIGTERM → close()): the server accepts no new connections and finishes the requests in
  // flight, but a client may still send a request on a keep-alive connection it holds. That request gets
  // the same 503 + Retry-After as a log outage (Fastify adds Connection: close), so that the connection
  // ends, the process can finish draining, and the client retries (elsewhere, behind a load balancer).
  let draining = false;
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  app.addHook('onRequest', (_request, _reply, done) => {
    done(draining ? new ServiceUnavailableError(UNAVAILABLE_RETRY_AFTER_S) : undefined);
  });
  // A request in flight when draining starts is finished, and its response ends the connection: the
  // server waits for every connection to close, and a client would otherwise keep it open, idle, for
  // the whole keep-alive timeout.
  app.addHook('onSend', (_request, reply, _payload, done) => {
    if (draining) reply.header('connection', 'close');
    done();
  });

  await app.register(rateLimit, {
    global: false,
    max: config.RATE_LIMIT_PER_HOUR,
    timeWindow: 3_600_000,
    hook: 'onRequest',
    redis: deps.redis ?? undefined,
    nameSpace: `${deps.redisPrefix ?? 'tally:'}ratelimit:`,
    cache: 100_000,
    // A Redis outage must not stop ingestion: requests pass unlimited until it is back (and it is logged).
    skipOnError: true,
    keyGenerator: clientIpOf,
    errorResponseBuilder: () => new RateLimitedError(),
  });

  app.setErrorHandler((error, request, reply) => {
    const mapped = toIngestError(error, config.BODY_LIMIT);
    if (mapped.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    if (mapped.retryAfterSeconds !== undefined) reply.header('Retry-After', String(mapped.retryAfterSeconds));
    return reply.code(mapped.statusCode).send(mapped.body());
  });
  app.setNotFoundHandler((request, reply) => {
    if (request.url.split('?')[0] === '/api/ingest') {
      return reply
        .code(405)
        .header('Allow', 'POST, OPTIONS')
        .send({ message: `${request.method} is not allowed on /api/ingest; use POST` });
    }
    const error = new NotFoundError(
      `${request.method} ${request.url.split('?')[0]} is not served here; use POST /api/ingest`,
    );
    return reply.code(404).send(error.body());
  });

  if (deps.metrics) {
    const { metrics } = deps;
    // A callback hook, not an async one: no promise per request on the hot path.
    app.addHook('onResponse', (request, reply, done) => {
      if (request.routeOptions.url === '/api/ingest' && request.method === 'POST') {
        metrics.requests.inc({ status: reply.statusCode, type: request.recordType });
      }
      done();
    });
  }
  app.register(ingestRoute, {
    config,
    log: withAppendTimeout(deps.log, config.APPEND_TIMEOUT_MS),
    tokens: deps.tokens,
    visitorIds: deps.visitorIds,
    metrics: deps.metrics,
  });
  return app;
}

/**
 * Parses a JSON body, refusing `__proto__` and `constructor.prototype` keys (prototype poisoning) with a
 * message that says so, rather than Fastify's generic one.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new BadRequestError('body is empty');
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    if (/prototype/i.test((error as Error).message)) {
      throw new BadRequestError('body must not contain "__proto__" or "constructor.prototype" keys');
    }
    throw new BadRequestError(`body is not valid JSON (${(error as Error).message})`);
  }
}
