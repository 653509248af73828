// A tiny HTTP server in front of the warehouse, on 127.0.0.1, as a proxy or a load balancer would be: it
// forwards requests to the real ClickHouse HTTP interface, or answers those `refuse` picks with a bare 431
// (no ClickHouse exception header, no body), as Node's HTTP server answers a URL over 16 KiB. Used as
// CLICKHOUSE_URL by tests of what a consumer does when the warehouse refuses its requests for good.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WarehouseFront {
  url: string;
  /** Which requests are answered 431 (by their URL, where the statement or its start is); null: none. */
  refuse: ((url: URL) => boolean) | null;
  /** How many requests were answered 431. */
  refused: number;
  close(): Promise<void>;
}

export const EVERYTHING = () => true;

export async function startWarehouseFront(target: string): Promise<WarehouseFront> {
  const upstream = new URL(target);
  const front: WarehouseFront = {
    url: '',
    refuse: null,
    refused: 0,
    close: async () => {},
  };
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://front');
    if (front.refuse?.(url)) {
      front.refused += 1;
      request.resume();
      request.on('end', () => response.writeHead(431, { connection: 'close' }).end());
      return;
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The target's credentials, if any, as the client sends them (Authorization), forwarded as they are.
  const address = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  address.username = upstream.username;
  address.password = upstream.password;
  front.url = address.toString().replace(/\/$/, '');
  front.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return front;
}
