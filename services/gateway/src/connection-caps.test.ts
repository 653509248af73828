// The caps on connections over real sockets, in process: the public port's cap (GATEWAY_MAX_CONNECTIONS,
// by default from the file-descriptor limit), a client's requests through a trusted proxy counted against
// the address X-Forwarded-For names (503 + Retry-After + Connection: close beyond the cap), and one cap per
// client for event loops that share the table (two gateway threads, each on a port of its own so that
// reusePort is not needed). A slow body (Expect: 100-continue) tells when the gateway has taken a request
// on: its 100 Continue. The direct clients' cap against a gateway process: test/hostile-slow-bodies.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedLog, type RecordLog } from '@tally/log';
import { FileTokenStore } from '@tally/tokens';
import { afterEach, expect, it } from 'vitest';
import { maxConnectionsPerLoop } from './connection-budget.ts';
import { sharedByThreads, startGatewayThread } from './gateway-threads.ts';
import {
  converse,
  localConfig,
  recordsIn,
  type SlowBody,
  slowBody,
  type TestGateway,
  testGateway,
} from './testing.ts';

let gw: TestGateway | undefined;
const slow: SlowBody[] = [];
const sockets: Socket[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const client of slow.splice(0)) client.stop();
  await gw?.close();
  gw = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function listening(env: Record<string, string>): Promise<number> {
  gw = await testGateway({ BODY_TIMEOUT_MS: '60000', ...env });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return (gw.app.server.address() as { port: number }).port;
}

/** A connection that sends nothing; settles once connected. */
function idle(port: number): Promise<Socket & { closedEarly: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    const closedEarly = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => {});
    socket.once('connect', () => resolve(Object.assign(socket, { closedEarly })));
    socket.once('error', reject);
  });
}

function request(token: string): string {
  const body = JSON.stringify({ type: 'pageview', data: { session_id: 's1', url: 'https://example.com/' } });
  return (
    'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    `X-API-Token: ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

async function counted(metric: 'connectionsRefused' | 'shed', reason: string): Promise<number> {
  const values = (await gw?.metrics[metric].get())?.values ?? [];
  return values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

it('keeps its connections below the file-descriptor budget, or GATEWAY_MAX_CONNECTIONS', async () => {
  await listening({});
  expect(gw?.app.server.maxConnections).toBe(maxConnectionsPerLoop(0, 1));
  await gw?.close();

  const port = await listening({ GATEWAY_MAX_CONNECTIONS: '4' });
  const held = [];
  for (let i = 0; i < 4; i++) held.push(await idle(port));
  // The fifth is closed as soon as it is accepted; the four are still served.
  const fifth = await idle(port);
  await fifth.closedEarly;
  expect(await counted('connectionsRefused', 'max_connections')).toBe(1);
  const [first] = held;
  const answered = new Promise<string>((resolve) => first?.once('data', (chunk) => resolve(String(chunk))));
  first?.write(request(gw?.publicToken ?? ''));
  expect(await answered).toMatch(/^HTTP\/1\.1 202 /);
  // One gone, a new connection is taken (once the server has seen the close).
  held[1]?.destroy();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await converse(port, request(gw?.publicToken ?? ''), { expected: 1 }).catch(() => null);
    if (answer?.responses[0]?.status === 202) break;
    if (Date.now() > deadline) throw new Error('no new connection taken within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});

it('counts requests through a trusted proxy against the client it names, answering 503 beyond the cap', async () => {
  const port = await listening({ TRUST_PROXY: '127.0.0.1', GATEWAY_MAX_CONNECTIONS_PER_IP: '2' });
  const token = gw?.publicToken ?? '';
  const from = (client: string) =>
    slowBody({
      port,
      token,
      length: 1000,
      everyMs: 200,
      deadlineMs: 30_000,
      headers: { 'X-Forwarded-For': client },
    });
  // Four connections from the proxy (not capped itself): two requests of one client are taken on, its third
  // is refused, another client's is taken on.
  const [a, b] = [from('198.51.100.7'), from('198.51.100.7')];
  slow.push(a, b);
  await Promise.all([a.heard, b.heard]);
  const third = from('198.51.100.7');
  const other = from('198.51.100.8');
  slow.push(third, other);
  await Promise.all([third.done, other.heard]);
  for (const held of [a, b, other]) expect(held.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
  expect(third.closedByServer).toBe(true);
  const answer = third.received().split('HTTP/1.1 100 Continue\r\n\r\n').join('');
  expect(answer).toMatch(/^HTTP\/1\.1 503 /);
  expect(answer).toMatch(/\r\nretry-after: 1\r\n/i);
  expect(answer).toMatch(/\r\nconnection: close\r\n/i);
  expect(answer).toMatch(/\{"error":"Service temporarily unavailable, retry later"\}$/);
  expect(await counted('shed', 'per_ip')).toBe(1);
  expect(await counted('connectionsRefused', 'per_ip')).toBe(0);
  // The client IP the cap counted is the one the record gets its country from (one trust function).
  const body = JSON.stringify({ type: 'pageview', data: { session_id: 's1' } });
  const proxied = await converse(
    port,
    'POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `X-API-Token: ${token}\r\nX-Forwarded-For: 81.2.69.142\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    { expected: 1 },
  );
  expect(proxied.responses[0]?.status).toBe(202);
  const [record] = await recordsIn(gw?.log as RecordLog, 1);
  expect(record?.country).toBe('GB');
});

it('holds one cap per client for event loops that share the table', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-caps-'));
  dirs.push(dir);
  const token = (await new FileTokenStore(dir).create('caps', 'public')).token;
  const config = localConfig(dir, { GATEWAY_MAX_CONNECTIONS_PER_IP: '3', BODY_TIMEOUT_MS: '60000' });
  const log = openEmbeddedLog({ path: join(dir, 'log'), writer: true });
  const shared = sharedByThreads(config);
  const together = await Promise.all(
    ['0', '1'].map((worker) => startGatewayThread(config, { worker, appendLog: log, shared })),
  );
  const apart = await Promise.all(
    ['0', '1'].map((worker) => startGatewayThread(config, { worker, appendLog: log })),
  );
  /** Six slow bodies from one address over the two threads: how many were taken on. */
  const held = async (urls: string[]) => {
    const clients = Array.from({ length: 6 }, (_, i) =>
      slowBody({
        port: Number(new URL(urls[i % 2] as string).port),
        localAddress: '127.0.0.7',
        token,
        length: 1000,
        everyMs: 200,
        deadlineMs: 30_000,
      }),
    );
    slow.push(...clients);
    await Promise.all(clients.map((client) => client.heard));
    return clients.filter((client) => !client.closed).length;
  };
  try {
    expect(await held(together.map((thread) => thread.url))).toBe(3);
    // Without the shared table each thread counts on its own: the client gets twice its cap.
    expect(await held(apart.map((thread) => thread.url))).toBe(6);
  } finally {
    for (const client of slow.splice(0)) client.stop();
    await Promise.all([...together, ...apart].map((thread) => thread.close()));
    await log.close();
  }
});
