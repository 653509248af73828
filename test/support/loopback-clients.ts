// Clients of a gateway on 127.0.0.1 that come from other loopback addresses (Linux routes all of
// 127.0.0.0/8 to the loopback interface): the gateway sees 127.0.0.2, 127.0.0.3, … as different client IPs,
// for tests of what it counts per client (the rate limit, the connection caps): a request whose JSON body
// is sent whole. (A connection that trickles its body from such an address: slowBody, in
// @tally/gateway/testing.)
import { type Agent, request as httpRequest } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** POSTs a JSON body to the gateway's /api/ingest from the given local (loopback) address. */
export function post(
  url: string,
  body: unknown,
  token: string,
  localAddress: string,
  agent?: Agent,
): Promise<Answer> {
  const { port } = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/api/ingest',
        method: 'POST',
        localAddress,
        agent: agent ?? false,
        timeout: 20_000,
        headers: {
          'content-type': 'application/json',
          'x-api-token': token,
          'content-length': payload.length,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', reject);
    req.end(payload);
  });
}
