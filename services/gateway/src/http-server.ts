// The Node HTTP server under the public Fastify instance, given to Fastify as its serverFactory and
// clientErrorHandler: the timeouts that cut slow clients off (Node's, and the body-read timeout of
// body-deadlines.ts), the caps on connections (per client IP: connection-caps.ts; for the process:
// server.maxConnections, below its file-descriptor budget: connection-budget.ts), admission control
// (admission.ts), one request at a time per connection (connection-order.ts), and the answers Node would
// write itself made like every other answer on the public port (a JSON body and the CORS headers, built by
// errors.ts): a missing Host and an unknown Expect are left to a hook (protocolError), and Node's client
// errors (a malformed request, headers too large, a timeout) are answered from the same mapping, in their
// turn on the connection.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { TallyConfig } from '@tally/config';
import type { FastifyServerFactoryHandler, FastifyServerOptions } from 'fastify';
import type { Admission } from './admission.ts';
import { BodyDeadlines } from './body-deadlines.ts';
import { maxConnectionsPerLoop } from './connection-budget.ts';
import type { ConnectionCaps } from './connection-caps.ts';
import { ConnectionOrder } from './connection-order.ts';
import { type IngestError, ingestError, rawErrorResponse, toClientErrorAnswer } from './errors.ts';
import type { GatewayMetrics } from './metrics.ts';

type PublicServerOptions = Required<
  Pick<FastifyServerOptions<Server>, 'serverFactory' | 'clientErrorHandler'>
>;

/** What the public server is built with besides the configuration. */
export interface PublicServerParts {
  admission?: Admission | undefined;
  caps?: ConnectionCaps | undefined;
  /** How many event loops of the process serve the port (they split GATEWAY_MAX_CONNECTIONS). */
  loops?: number | undefined;
  metrics?: GatewayMetrics | undefined;
  /** The process's soft RLIMIT_NOFILE (by default read from /proc/self/limits); null: unknown. */
  openFilesLimit?: number | null | undefined;
}

export function publicHttpServer(config: TallyConfig, parts: PublicServerParts = {}): PublicServerOptions {
  let order: ConnectionOrder | undefined;
  /** Ends a connection with `answer`, in its turn (or at once when its request is incomplete). */
  const endWith = (socket: Socket, answer: IngestError) => {
    if (order === undefined) {
      socket.destroy();
      return;
    }
    order.finally(socket, () => socket.end(rawErrorResponse(answer), () => socket.destroy()));
  };
  return {
    serverFactory: (handler: FastifyServerFactoryHandler) => {
      const { admission, caps, metrics } = parts;
      // A body that arrives too slowly is answered 408 and its connection closed, as Node's own request
      // timeout does.
      const bodies = new BodyDeadlines(
        {
          baseMs: config.BODY_TIMEOUT_MS,
          minBytesPerSecond: config.BODY_MIN_BYTES_PER_SECOND,
          bodyLimit: config.BODY_LIMIT,
        },
        (req) => endWith(req.socket, ingestError('request_timeout')),
      );
      // Each request in its turn on the connection: counted against its client when it comes through a
      // proxy (connection-caps.ts), given its body deadline, then admission control before Fastify sees it.
      let listener = admission ? admission.guard(handler) : handler;
      listener = bodies.track(listener);
      if (caps) listener = caps.guard(listener);
      order = new ConnectionOrder(listener);
      const server = createServer(
        {
          // Slow clients (slowloris) are cut off: each phase of a connection has a bound (408, then closed).
          requestTimeout: config.REQUEST_TIMEOUT_MS,
          // Node refuses a headers timeout above the request timeout; the request timeout bounds both anyway.
          headersTimeout: Math.min(config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS),
          // Node checks those two timeouts on this interval (30 s by default): check every second instead, so
          // that a slow client is cut off close to its timeout.
          connectionsCheckingInterval: 1000,
          // Node would answer a missing Host itself, with an empty body and no CORS headers: protocolError.
          requireHostHeader: false,
        },
        order.dispatch,
      );
      // Without this listener Node answers an Expect other than 100-continue itself: protocolError again.
      server.on('checkExpectation', order.dispatch);
      server.keepAliveTimeout = config.KEEP_ALIVE_TIMEOUT_MS;
      server.setTimeout(config.CONNECTION_TIMEOUT_MS);
      // Node closes a connection beyond maxConnections as soon as it is accepted ('drop').
      const maxConnections = maxConnectionsPerLoop(
        config.GATEWAY_MAX_CONNECTIONS,
        parts.loops ?? 1,
        ...(parts.openFilesLimit !== undefined ? [parts.openFilesLimit] : []),
      );
      if (maxConnections !== null) server.maxConnections = maxConnections;
      server.on('drop', () => metrics?.connectionsRefused.inc({ reason: 'max_connections' }));
      if (caps) server.on('connection', caps.connection);
      server.once('close', () => bodies.stop());
      return server;
    },
    clientErrorHandler: (error, socket) => {
      const answer = toClientErrorAnswer(error);
      if (answer === null) {
        socket.destroy(); // the connection failed (reset, broken pipe): nothing can be answered
        return;
      }
      endWith(socket, answer);
    },
  };
}

/**
 * The refusal Node's HTTP server would have written itself for this request, if any: an HTTP/1.1 request
 * without Host (RFC 9112, 3.2), or an Expect other than 100-continue (RFC 9110, 10.1.1).
 */
export function protocolError(raw: IncomingMessage): IngestError | undefined {
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && raw.headers.host === undefined) {
    return ingestError('missing_host');
  }
  const expect = raw.headers.expect;
  if (expect !== undefined && !CONTINUE_EXPECTATION.test(expect)) return ingestError('expectation_failed');
  return undefined;
}

/** What Node's HTTP server takes for `Expect: 100-continue` (it handles that one itself). */
const CONTINUE_EXPECTATION = /(?:^|\W)100-continue(?:$|\W)/i;
