// The cap on what one client IP may hold open on the public port (GATEWAY_MAX_CONNECTIONS_PER_IP), counted
// in the table every event loop of the process shares (ip-connections.ts). The client IP is the one the
// gateway uses everywhere else (the rate limit, the visitor id): the peer's address, or, from a trusted
// proxy (TRUST_PROXY), the client X-Forwarded-For names, with the same trust function as Fastify's.
// - A client connecting directly: its connections are counted from accept to close, and one beyond the
//   cap is closed as soon as it is accepted, before a byte of it is read: the cheapest answer there is
//   (no parsing, no timer, the descriptor back at once). A client cannot tell a closed connection from a
//   network error, and retries as it would after one.
// - A trusted proxy: its connections carry many clients' requests, so they are not capped; each request
//   counts against its client from its headers to its response, and one beyond the cap is answered 503
//   with Retry-After and Connection: close (closing the proxy's connection would fail the others on it).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { errorResponse, ingestError } from './errors.ts';
import { type IpConnections, OVER_CAP } from './ip-connections.ts';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Whether the address at hop `i` of the forwarding chain is a trusted proxy (Fastify's trustProxy). */
export type TrustProxy = (address: string, i: number) => boolean;

/** The trust function Fastify builds from a TRUST_PROXY list, or null when no proxy is trusted. */
export function trustProxyFunction(proxies: string[] | false): TrustProxy | null {
  return proxies === false ? null : proxyAddr.compile(proxies);
}

/** The client IP computed for a proxied request, kept on it for clientIpOf (X-Forwarded-For parsed once). */
const CLIENT_IP = Symbol('tally.clientIp');
type CountedRequest = IncomingMessage & { [CLIENT_IP]?: string };

/** The client IP the cap counted a proxied request against, if it was one. */
export function countedClientIp(req: IncomingMessage): string | undefined {
  return (req as CountedRequest)[CLIENT_IP];
}

/** The answer to a proxied request beyond its client's cap, built once. */
const OVER_CAP_ANSWER = (() => {
  const { statusCode, headers, body } = errorResponse(ingestError('client_over_cap'));
  const bytes = Buffer.from(body);
  return { statusCode, headers: { ...headers, 'content-length': String(bytes.length) }, body: bytes };
})();

export interface ConnectionCapsOptions {
  /** GATEWAY_MAX_CONNECTIONS_PER_IP. */
  perIp: number;
  connections: IpConnections;
  trust: TrustProxy | null;
  /** A direct connection was closed at accept: its client holds `perIp` already. */
  onConnectionRefused?: () => void;
  /** A proxied request was answered 503: its client has `perIp` requests in progress. */
  onRequestShed?: () => void;
}

export class ConnectionCaps {
  readonly #options: ConnectionCapsOptions;
  /** Connections from a trusted proxy: their requests are counted instead. */
  readonly #proxied = new WeakSet<Socket>();

  constructor(options: ConnectionCapsOptions) {
    this.#options = options;
  }

  /** The server's 'connection' listener: counts the connection against its peer, or closes it. */
  readonly connection = (socket: Socket): void => {
    const address = socket.remoteAddress;
    if (address === undefined) return; // already gone
    if (this.#options.trust?.(address, 0)) {
      this.#proxied.add(socket);
      return;
    }
    const slot = this.#options.connections.acquire(address, this.#options.perIp);
    if (slot === OVER_CAP) {
      this.#options.onConnectionRefused?.();
      socket.destroy();
      return;
    }
    socket.once('close', () => this.#options.connections.release(slot));
  };

  /** A request listener that counts a proxied request against its client, or answers it 503. */
  guard(handle: RequestListener): RequestListener {
    return (req, res) => {
      const trust = this.#options.trust;
      if (trust === null || !this.#proxied.has(req.socket)) return handle(req, res);
      const ip = proxyAddr(req, trust);
      (req as CountedRequest)[CLIENT_IP] = ip;
      const slot = this.#options.connections.acquire(ip, this.#options.perIp);
      if (slot === OVER_CAP) {
        this.#options.onRequestShed?.();
        res.writeHead(OVER_CAP_ANSWER.statusCode, OVER_CAP_ANSWER.headers).end(OVER_CAP_ANSWER.body);
        return;
      }
      res.once('close', () => this.#options.connections.release(slot));
      handle(req, res);
    };
  }
}
