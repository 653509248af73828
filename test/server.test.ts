// The gateway as `npm start` runs it: a real listening server on embedded defaults, its admin port, and a
// clean shutdown on SIGTERM.
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { decodedOnly } from '@tally/log/conformance';
import { FileTokenStore } from '@tally/tokens';
import { readPublishedEndpoint } from '@tally/warehouse-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, postIngest, startGatewayProcess, tempDataDir } from './support/processes.ts';
import { startTallyProcess } from './support/tally-process.ts';

describe('the gateway process', () => {
  let gateway: GatewayProcess;
  let token: string;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDataDir();
    token = (await new FileTokenStore(dataDir).create('e2e', 'public')).token;
    gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await gateway.stop('SIGKILL');
  });

  it('accepts a beacon (text/plain, token in the body) from a browser origin', async () => {
    const res = await fetch(`${gateway.url}/api/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example' },
      body: JSON.stringify({ type: 'pageview', token, data: { session_id: 's', visitor_fingerprint: null } }),
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ success: true });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('serves health, readiness and metrics on the admin port only', async () => {
    expect(gateway.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:/);
    expect(await (await fetch(`${gateway.adminUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${gateway.adminUrl}/readyz`);
    expect(ready.status).toBe(200);
    await postIngest(gateway.url, { type: 'event', data: { session_id: 's', event_name: 'x' } }, token);
    const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
    expect(metrics).toContain('tally_ingest_requests_total{status="202",type="event"} 1');
    expect(metrics).toContain('tally_log_append_duration_seconds_bucket');
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);
  });

  it('never logs tokens, IPs or payloads', () => {
    expect(gateway.output()).not.toContain(token);
    expect(gateway.output()).not.toContain('127.0.0.1"');
  });
});

it('shuts down cleanly on SIGTERM, keeping what it acknowledged', async () => {
  const dataDir = tempDataDir();
  const token = (await new FileTokenStore(dataDir).create('e2e', 'public')).token;
  // Two event loops where the Node.js has reusePort (one, with a warning, on an older one): the first
  // pageviews of a day make both loops create the day's visitor salt at once.
  const gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir, GATEWAY_WORKERS: '2' });
  try {
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postIngest(gateway.url, { type: 'pageview', data: { session_id: `s${i}` } }, token),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(202));
    expect(await gateway.stop('SIGTERM')).toBe(0);
  } finally {
    // A failed expectation must not leave the process running after the suite.
    if (gateway.process.exitCode === null && gateway.process.signalCode === null)
      gateway.process.kill('SIGKILL');
  }
  const log = openEmbeddedLog({ path: join(dataDir, 'log') });
  expect(await log.consumer({ group: 'check' }).poll({ max: 100 })).toHaveLength(50);
  await log.close();
});

it('drains on SIGTERM under load (two event loops where Node.js has reusePort): every answer a 202 kept or a 503', async () => {
  const dataDir = tempDataDir();
  const token = (await new FileTokenStore(dataDir).create('e2e', 'public')).token;
  const gateway = await startGatewayProcess({
    TALLY_DATA_DIR: dataDir,
    GATEWAY_WORKERS: '2',
    RATE_LIMIT_PER_HOUR: '1000000',
  });
  const acknowledged: string[] = [];
  const others: Array<{ status: number; retryAfter: string | null }> = [];
  // Connections refused (or reset in a closed listener's queue) once draining began: nothing acknowledged.
  const refused = new Map<string, number>();
  let exited = false;
  let signalled = false;
  const exit = gateway.exited.then((code) => {
    exited = true;
    return code;
  });
  const SIGTERM_AFTER = 300;
  const MAX_REQUESTS = 20_000; // bounded: the process exits long before
  let sent = 0;
  const client = async (worker: number) => {
    while (!exited && sent < MAX_REQUESTS) {
      sent++;
      const id = crypto.randomUUID();
      try {
        const res = await fetch(`${gateway.url}/api/ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-token': token },
          body: JSON.stringify({ type: 'pageview', id, data: { session_id: `s${worker}` } }),
        });
        await res.arrayBuffer();
        if (res.status === 202) acknowledged.push(id);
        else others.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code ?? 'other';
        refused.set(code, (refused.get(code) ?? 0) + 1);
      }
      if (acknowledged.length >= SIGTERM_AFTER && !signalled) {
        signalled = true;
        gateway.process.kill('SIGTERM');
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: 16 }, (_, i) => client(i)));
    expect(await exit).toBe(0);
  } finally {
    if (gateway.process.exitCode === null && gateway.process.signalCode === null)
      gateway.process.kill('SIGKILL');
  }
  expect(signalled).toBe(true);
  // Draining refuses with 503 and Retry-After (the client retries elsewhere); nothing else is answered.
  expect(others.filter((o) => o.status !== 503 || o.retryAfter === null)).toEqual([]);
  const log = openEmbeddedLog({ path: join(dataDir, 'log') });
  const consumer = log.consumer({ group: 'check' });
  const found = new Set<string>();
  for (
    let batch = await consumer.poll({ max: 1000 });
    batch.length > 0;
    batch = await consumer.poll({ max: 1000 })
  )
    for (const m of decodedOnly(batch)) found.add(m.record.id);
  await log.close();
  expect(acknowledged.filter((id) => !found.has(id))).toEqual([]);
  console.log(
    `SIGTERM under load: ${acknowledged.length} acknowledged, ${others.length} answered 503, refused: ${JSON.stringify(Object.fromEntries(refused))}`,
  );
});

it('refuses to start a second gateway on the same embedded log, and starts once the first is gone', async () => {
  const dataDir = tempDataDir();
  const token = (await new FileTokenStore(dataDir).create('e2e', 'public')).token;
  const first = await startGatewayProcess({ TALLY_DATA_DIR: dataDir });
  await expect(startGatewayProcess({ TALLY_DATA_DIR: dataDir })).rejects.toThrow(
    `is being written by another process (pid ${first.process.pid})`,
  );
  expect((await postIngest(first.url, { type: 'pageview', data: { session_id: 'a' } }, token)).status).toBe(
    202,
  );

  // Killed without a chance to remove its lock: the next gateway takes the stale lock over.
  await first.stop('SIGKILL');
  const second = await startGatewayProcess({ TALLY_DATA_DIR: dataDir });
  expect((await postIngest(second.url, { type: 'pageview', data: { session_id: 'b' } }, token)).status).toBe(
    202,
  );
  expect(await second.stop('SIGTERM')).toBe(0);

  const log = openEmbeddedLog({ path: join(dataDir, 'log') });
  const records = decodedOnly(await log.consumer({ group: 'check' }).poll({ max: 100 }));
  expect(records.map((m) => [m.offset, m.record.data.session_id])).toEqual([
    [0, 'a'],
    [1, 'b'],
  ]);
  await log.close();
});

it('npm start refuses a data directory whose log another gateway writes, naming it, and cleans up', async () => {
  const dataDir = tempDataDir();
  const gateway = await startGatewayProcess({ TALLY_DATA_DIR: dataDir });
  try {
    // The gateway thread of `npm start` fails on the writer lock; the process reports it and exits.
    await expect(startTallyProcess({ TALLY_DATA_DIR: dataDir })).rejects.toThrow(
      `is being written by another process (pid ${gateway.process.pid})`,
    );
    expect(readPublishedEndpoint(dataDir)).toBeNull(); // no warehouse endpoint left behind
  } finally {
    expect(await gateway.stop('SIGTERM')).toBe(0);
  }
});
