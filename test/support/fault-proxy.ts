// A tiny HTTP proxy on 127.0.0.1 in front of the real gateway that answers the first POSTs with scripted
// faults (429, 503, …) or holds them (a slow network) and forwards everything else, recording what it saw.
// It lets the SDK tests show retries against the real gateway without waiting out the gateway's real
// one-hour rate-limit window.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A POST forwarded only once `until` has settled: a slow network, with the request on its way meanwhile. */
export interface Hold {
  until: Promise<unknown>;
}

export type Fault = Answer | Hold;

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Forward the request to the gateway first and then answer with the fault: an acknowledgement lost on the way. */
  forwardFirst?: boolean;
}

export interface SeenRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the client got. */
  status: number;
}

export interface FaultProxy {
  url: string;
  /** Every POST, in order. */
  posts: SeenRequest[];
  close(): Promise<void>;
}

// Faults answer like the gateway does, CORS included, so that a browser sees their status and Retry-After.
const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After' };
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding']);

/** Starts the proxy; the n-th POST gets `faults[n]` while there is one, later POSTs are forwarded. */
export async function startFaultProxy(target: string, faults: Fault[]): Promise<FaultProxy> {
  const posts: SeenRequest[] = [];
  let postIndex = 0;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const scripted = request.method === 'POST' ? faults[postIndex++] : undefined;
    const seen: SeenRequest = { method: request.method ?? '', headers: request.headers, body, status: 0 };
    if (request.method === 'POST') posts.push(seen);
    const fault = scripted && 'until' in scripted ? undefined : scripted;
    try {
      if (scripted && 'until' in scripted) await scripted.until;
      const forwarded =
        !fault || fault.forwardFirst ? await forward(target, request.method, request, body) : null;
      if (fault) {
        seen.status = fault.status;
        response
          .writeHead(fault.status, { ...CORS, 'content-type': 'application/json', ...fault.headers })
          .end(JSON.stringify(fault.body ?? { error: `fault ${fault.status}` }));
      } else if (forwarded) {
        seen.status = forwarded.status;
        const headers: Record<string, string> = {};
        forwarded.headers.forEach((value, key) => {
          if (!HOP_BY_HOP.has(key)) headers[key] = value;
        });
        response.writeHead(forwarded.status, headers).end(Buffer.from(await forwarded.arrayBuffer()));
      }
    } catch (error) {
      seen.status = 502;
      response.writeHead(502, CORS).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function forward(
  target: string,
  method: string | undefined,
  request: { url?: string | undefined; headers: IncomingHttpHeaders },
  body: string,
): Promise<Response> {
  const headers = new Headers();
  for (const [key, value] of Object.entries(request.headers)) {
    if (!HOP_BY_HOP.has(key) && typeof value === 'string') headers.set(key, value);
  }
  return fetch(new URL(request.url ?? '/', target), {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  });
}
