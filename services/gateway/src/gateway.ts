// buildGateway: the public ingest API as a Fastify instance, built from a config and its dependencies so
// that tests can build one with their own. POST /api/ingest runs its checks in the order docs/api.md lists
// its answers: before Fastify sees the request, the connection caps and admission control (http-server.ts:
// 503 or a closed connection); the global onRequest hooks (a refused preflight, draining: 503, a missing
// Host or unknown Expect: 400, 417); the rate limit (the route's onRequest, before the body is read: 429)
// → body decoding (preParsing: 415) → content type, size and JSON (the parser: 415, 413, 400) → admission
// (preValidation, once the body is read: 503) → in ingest-route.ts, a JSON object not nested too deeply
// (400) → token (401) → allowed origin (403) → revenue needs a secret token (403) → validation (400) →
// durable append (503 when not durable within APPEND_TIMEOUT_MS) → 202. Every error, from any layer, is
// answered by replyWithError through errors.ts. Design notes: docs/design/gateway.md.
import { isUtf8 } from 'node:buffer';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { TallyConfig } from '@tally/config';
import { trustedProxies } from '@tally/config';
import { LogUnavailableError, type RecordLog, withAppendTimeout } from '@tally/log';
import type { OriginPolicy, TokenVerifier } from '@tally/tokens';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Redis } from 'ioredis';
import secureJson from 'secure-json-parse';
import { Admission } from './admission.ts';
import { ConnectionCaps, trustProxyFunction } from './connection-caps.ts';
import { decodeContentEncoding } from './content-encoding.ts';
import { type CountryLookup, sharedCountryLookup } from './country.ts';
import { errorResponse, ingestError, toIngestError } from './errors.ts';
import { protocolError, publicHttpServer } from './http-server.ts';
import { clientIpOf, ingestRoute } from './ingest-route.ts';
import { createIpConnectionTable, IpConnections, type IpConnectionTable } from './ip-connections.ts';
import type { GatewayMetrics } from './metrics.ts';
import { refuseDisallowedPreflight } from './origin-policy.ts';
import { countRefusals, type RefusalCounter } from './refusals.ts';
import {
  createSharedRateLimitTable,
  SharedRateLimitStore,
  type SharedRateLimitTable,
} from './shared-rate-limits.ts';
import { DEFAULT_TRACKER_DIR, trackerScriptRoutes } from './tracker-script.ts';
import type { VisitorIds } from './visitor-id.ts';

export interface GatewayDeps {
  config: TallyConfig;
  log: RecordLog;
  tokens: Pick<TokenVerifier, 'verify' | 'verifyFresh'>;
  /** Allowed origins per project (by default the token verifier's, when it is one). */
  origins?: OriginPolicy;
  visitorIds: VisitorIds;
  /** Country of a client IP (by default the DB-IP database shipped in the package). */
  countries?: CountryLookup;
  /** Rate-limit counters live here when given (shared by replicas), in memory otherwise. */
  redis?: Redis | null;
  /**
   * Without Redis: the in-memory rate-limit counters, shared by the process's event loops
   * (GATEWAY_WORKERS; shared-rate-limits.ts); by default a table of this gateway's own.
   */
  rateLimits?: SharedRateLimitTable;
  /**
   * The connections each client IP holds, shared by the process's event loops (GATEWAY_WORKERS;
   * ip-connections.ts); by default a table of this gateway's own.
   */
  ipConnections?: IpConnectionTable;
  /** How many event loops of the process serve the port (default 1): they split GATEWAY_MAX_CONNECTIONS. */
  loops?: number;
  /** Prefix of every Redis key (default `tally:`). */
  redisPrefix?: string;
  metrics?: GatewayMetrics;
  /** A pino logger; none (silent) by default, as in tests. */
  logger?: FastifyBaseLogger;
  /** Where the tracker's bundles are (packages/core/dist/tracker by default); null: GET /tally.js is 404. */
  trackerDir?: string | null;
  /** Which of the gateway's event loops this is (GATEWAY_WORKERS), for the metrics' worker label. */
  worker?: string;
  /** Counts refused requests per project for the dashboard's health view (refusals.ts). */
  refusals?: RefusalCounter;
  /**
   * Set while the consumers of this process are more than GATEWAY_MAX_CONSUMER_LAG records behind
   * (npm start; admission.ts): every request is then answered 503 with Retry-After.
   */
  landingBehind?: Int32Array;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The record type named by the body, for metrics ('unknown' until the body is read). */
    recordType: string;
    /** request.ip once computed ('' before): see clientIpOf. */
    clientIp: string;
  }
}

/** Clients whose rate-limit counts are kept in memory at once (without Redis). */
export const RATE_LIMIT_KEYS = 100_000;

export async function buildGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const origins =
    deps.origins ??
    ('anyProjectAllows' in deps.tokens ? (deps.tokens as unknown as OriginPolicy) : undefined);
  const admission = new Admission(
    {
      maxInFlight: config.GATEWAY_MAX_IN_FLIGHT,
      maxPendingAppends: config.GATEWAY_MAX_PENDING_APPENDS,
      landingBehind: deps.landingBehind,
    },
    deps.metrics,
    deps.worker,
  );
  // One trust function for Fastify's request.ip and the connection caps: both see the same client IP.
  const trust = trustProxyFunction(trustedProxies(config));
  const caps = new ConnectionCaps({
    perIp: config.GATEWAY_MAX_CONNECTIONS_PER_IP,
    connections: new IpConnections(deps.ipConnections ?? createIpConnectionTable()),
    trust,
    onConnectionRefused: () => deps.metrics?.connectionsRefused.inc({ reason: 'per_ip' }),
    onRequestShed: () => deps.metrics?.shed.inc({ reason: 'per_ip' }),
  });
  /** Set when close() begins: see the hooks below. */
  let draining = false;
  const app = Fastify({
    loggerInstance: deps.logger,
    trustProxy: trust ?? false,
    bodyLimit: config.BODY_LIMIT,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    logController: new LogController({ disableRequestLogging: true }),
    // Our own 503 while draining (below): Fastify's has neither our body nor Retry-After.
    return503OnClosing: false,
    // Node's HTTP server under it: timeouts, connection caps, admission control, one request at a time per
    // connection, Node's own answers made like ours.
    ...publicHttpServer(config, { admission, caps, loops: deps.loops, metrics: deps.metrics }),
    // Errors Fastify answers before any route or hook (a URL it cannot decode): through the same mapping.
    frameworkErrors: (error, request, reply) => replyWithError(error, request, reply),
  });
  // The one error handler, set before any plugin adds a route (a route keeps the handler set when it was
  // added): @fastify/cors's OPTIONS route too.
  app.setErrorHandler(replyWithError);
  app.decorateRequest('recordType', 'unknown');
  app.decorateRequest('clientIp', '');
  app.decorateRequest('projectId', '');
  // A request takes its place in flight once its body has been read (admission.ts): a body still arriving
  // holds no slot. Beyond the bounds: 503 + Retry-After, as at its headers.
  app.addHook('preValidation', (_request, reply, done) => done(admission.admit(reply.raw)));

  // navigator.sendBeacon sends the JSON envelope as text/plain: parse it exactly like application/json.
  // Read as bytes, so that bytes which are not UTF-8 are refused rather than decoded to U+FFFD.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    ['application/json', 'text/plain'],
    { parseAs: 'buffer' },
    (request, body, done) => {
      // No route takes it (the answer is 404 or 405, whatever the body holds): not worth parsing.
      if (request.is404) return done(null, undefined);
      try {
        done(null, parseJsonBody(body as Buffer));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
  app.addHook('preParsing', decodeContentEncoding(config.BODY_LIMIT));

  // @fastify/cors answers an OPTIONS request that is not a preflight with a text body: this hook, ahead of
  // it, refuses those through the error mapping instead (a JSON body, and the CORS headers all errors get).
  app.addHook('onRequest', (request, _reply, done) => {
    const isPreflight = request.headers.origin && request.headers['access-control-request-method'];
    done(request.method === 'OPTIONS' && !isPreflight ? ingestError('invalid_preflight') : undefined);
  });
  if (origins) app.addHook('onRequest', refuseDisallowedPreflight(origins));
  // CORS before the other hooks, so that every response (429 and other errors included) carries the headers.
  await app.register(cors, {
    origin: '*',
    methods: ['POST'],
    allowedHeaders: ['Content-Type', 'X-API-Token'],
    exposedHeaders: ['Retry-After'],
    maxAge: 86_400,
    strictPreflight: false,
  });

  // Draining (SIGTERM → close()): the server accepts no new connections and finishes the requests in
  // flight, but a client may still send a request on a keep-alive connection it holds. That request gets
  // the same 503 + Retry-After as a log outage (Fastify adds Connection: close), so that the connection
  // ends, the process can finish draining, and the client retries (elsewhere, behind a load balancer).
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  app.addHook('onRequest', (request, _reply, done) => {
    done(draining ? ingestError('unavailable') : protocolError(request.raw));
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
    // Without Redis, counters every event loop of the process shares (@fastify/rate-limit's own are per loop).
    ...(deps.redis
      ? { redis: deps.redis }
      : { store: SharedRateLimitStore.over(deps.rateLimits ?? createSharedRateLimitTable(RATE_LIMIT_KEYS)) }),
    nameSpace: `${deps.redisPrefix ?? 'tally:'}ratelimit:`,
    // A Redis outage must not stop ingestion: requests pass unlimited until it is back (and it is logged).
    skipOnError: true,
    keyGenerator: clientIpOf,
    errorResponseBuilder: () => ingestError('rate_limited'),
  });

  // GET /tally.js and its versioned names: the only paths besides /api/ingest (see tracker-script.ts).
  if (deps.trackerDir !== null && !trackerScriptRoutes(app, deps.trackerDir ?? DEFAULT_TRACKER_DIR)) {
    app.log.warn('the tracker is not built (npm run build): GET /tally.js answers 404');
  }

  app.setNotFoundHandler(async (request) => {
    throw request.url.split('?')[0] === '/api/ingest'
      ? ingestError('method_not_allowed')
      : ingestError('not_found');
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
  if (deps.refusals) app.addHook('onResponse', countRefusals(deps.refusals, deps.tokens));
  app.register(ingestRoute, {
    config,
    log: admission.countingAppends(withAppendTimeout(deps.log, config.APPEND_TIMEOUT_MS)),
    tokens: deps.tokens,
    origins,
    visitorIds: deps.visitorIds,
    countries: deps.countries ?? sharedCountryLookup(deps.config.GEO_DATABASE),
    metrics: deps.metrics,
  });
  function replyWithError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
    const mapped = toIngestError(error, config.BODY_LIMIT);
    if (mapped.statusCode >= 500) {
      // A retryable failure (the record log's outage) is expected to pass: one short line, no stack (it
      // says nothing of the request); none at all while the log has told of the outage itself (its
      // circuit is open: one line when it opened, one when it closes). Anything else is a defect.
      const unavailable = mapped.cause instanceof LogUnavailableError ? mapped.cause : null;
      if (unavailable?.reported) request.log.debug(`answered ${mapped.statusCode}: ${reasonOf(unavailable)}`);
      else if (unavailable) request.log.warn(`answered ${mapped.statusCode}: ${reasonOf(unavailable)}`);
      else if (mapped.retryable) request.log.warn({ err: error }, `answered ${mapped.statusCode}`);
      else request.log.error({ err: error }, 'request failed');
    }
    // Fastify closes the connection after any error while reading or parsing a body, as the client may still
    // be sending it. When the body was read to its end the connection is still in step: keep it open, so
    // that the requests pipelined behind this one are answered too.
    if (reply.getHeader('connection') === 'close' && request.raw.readableEnded && !draining) {
      reply.removeHeader('connection');
    }
    const response = errorResponse(mapped);
    return reply.code(response.statusCode).headers(response.headers).send(response.body);
  }
  return app;
}

/** Why the record log was unavailable, in a line: its message and its cause's first line. */
function reasonOf(error: LogUnavailableError): string {
  const cause = error.cause instanceof Error ? error.cause.message.split('\n')[0]?.slice(0, 200) : '';
  return cause ? `${error.message} (${cause})` : error.message;
}

/**
 * Parses a JSON body, refusing bytes that are not UTF-8 (RFC 8259, 8.1: JSON text is UTF-8; decoded, they
 * would become U+FFFD, while an escaped lone surrogate, `"\ud800"`, is refused by the contract) and
 * `__proto__` and `constructor.prototype` keys (prototype poisoning) with a message that says so, rather
 * than Fastify's generic one. A syntax error is told by its position only: V8's own message quotes the
 * input, which must not come back in a response.
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw ingestError('bad_request', 'body is empty');
  if (!isUtf8(body)) throw ingestError('bad_request', 'body is not valid UTF-8');
  const text = body.toString('utf8');
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    const message = (error as Error).message;
    if (message === 'Object contains forbidden prototype property') {
      throw ingestError('bad_request', 'body must not contain "__proto__" or "constructor.prototype" keys');
    }
    if (message === 'Unexpected end of JSON input') {
      throw ingestError('bad_request', 'body is not valid JSON (Unexpected end of JSON input)');
    }
    const position = /\bat position (\d+)\b/.exec(message)?.[1];
    throw ingestError(
      'bad_request',
      `body is not valid JSON${position ? ` (error at position ${position})` : ''}`,
    );
  }
}
