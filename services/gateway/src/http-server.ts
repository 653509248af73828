// The Node HTTP server under the public Fastify instance, given to Fastify as its serverFactory and
// clientErrorHandler: the timeouts that cut slow clients off, one request at a time per connection
// (connection-order.ts), and the answers Node would write itself made like every other answer on the
// public port (a JSON body and the CORS headers, built by errors.ts): a missing Host and an unknown Expect
// are left to a hook (protocolError), and Node's client errors (a malformed request, headers too large, a
// timeout) are answered from the same mapping, in their turn on the connection.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { TallyConfig } from '@tally/config';
import type { FastifyServerFactoryHandler, FastifyServerOptions } from 'fastify';
import type { Admission } from './admission.ts';
import { ConnectionOrder } from './connection-order.ts';
import {
  ExpectationFailedError,
  type IngestError,
  MissingHostError,
  rawErrorResponse,
  toClientErrorAnswer,
} from './errors.ts';

type PublicServerOptions = Required<
  Pick<FastifyServerOptions<Server>, 'serverFactory' | 'clientErrorHandler'>
>;

export function publicHttpServer(config: TallyConfig, admission?: Admission): PublicServerOptions {
  let order: ConnectionOrder | undefined;
  return {
    serverFactory: (handler: FastifyServerFactoryHandler) => {
      // Admission control sees a request when its turn on the connection comes, before Fastify does.
      order = new ConnectionOrder(admission ? admission.guard(handler) : handler);
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
      return server;
    },
    clientErrorHandler: (error, socket) => {
      const answer = toClientErrorAnswer(error);
      if (answer === null || order === undefined) {
        socket.destroy(); // the connection failed (reset, broken pipe): nothing can be answered
        return;
      }
      order.finally(socket, () => socket.end(rawErrorResponse(answer), () => socket.destroy()));
    },
  };
}

/**
 * The refusal Node's HTTP server would have written itself for this request, if any: an HTTP/1.1 request
 * without Host (RFC 9112, 3.2), or an Expect other than 100-continue (RFC 9110, 10.1.1).
 */
export function protocolError(raw: IncomingMessage): IngestError | undefined {
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && raw.headers.host === undefined) {
    return new MissingHostError();
  }
  const expect = raw.headers.expect;
  if (expect !== undefined && !CONTINUE_EXPECTATION.test(expect)) return new ExpectationFailedError();
  return undefined;
}

/** What Node's HTTP server takes for `Expect: 100-continue` (it handles that one itself). */
const CONTINUE_EXPECTATION = /(?:^|\W)100-continue(?:$|\W)/i;
