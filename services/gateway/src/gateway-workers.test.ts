// GATEWAY_WORKERS=2: two gateway event loops on one port, the embedded log's one writer in the caller's
// thread fed by both: two worker threads where the memory holds a third isolate, else the caller's thread
// and one worker thread (the main thread serves a loop: N loops are N isolates, not N + 1). Requests over many connections reach both loops (tally_gateway_admitted_total
// per worker, merged on the admin port), every 202 is a record in the log, every loop's refusals reach
// the project's counts in the state store, the loops drain on close and the writer lock is released. Needs
// reusePort (Node.js 22.12+): on an older Node.js it is skipped, with the reason; CI runs the suite on
// Node.js 24, where it runs. A client's requests spread over both loops get exactly its rate limit (the
// loops share the in-memory counts).
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { LmdbStateStore, RefusalCounts } from '@tally/state-store';
import { FileTokenStore } from '@tally/tokens';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { startGatewayService } from './gateway-service.ts';
import { reusePortSupported } from './gateway-threads.ts';
import { admittedByWorker, localConfig, recordsIn, startCountingThreads } from './testing.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function post(url: string, token: string, body: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/api/ingest`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-api-token': token } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const layouts = [
  { layout: 'two loop threads beside the writer', host: { cores: 2, memoryMiB: 24_000 }, threads: 2 },
  { layout: 'the main thread one of the loops (256 MiB)', host: { cores: 2, memoryMiB: 256 }, threads: 1 },
];

it.skipIf(!reusePortSupported()).each(layouts)(
  `two event loops share the port and the one log: $layout${reusePortSupported() ? '' : ` (skipped: Node.js ${process.versions.node} has no reusePort)`}`,
  async ({ host, threads }) => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-workers-'));
    dirs.push(dir);
    const token = (await new FileTokenStore(dir).create('workers-project', 'public')).token;
    const config = localConfig(dir, {
      GATEWAY_WORKERS: '2',
    });
    const { gateway, threads: threadsStarted } = await startCountingThreads(config, host);
    let closed = false;
    try {
      expect(gateway.workers).toBe(2);
      expect(threadsStarted).toBe(threads);
      // Many connections, several rounds: the kernel spreads new connections over both listening sockets.
      const ids: string[] = [];
      for (let round = 0; round < 4; round++) {
        const agent = new Agent({ keepAlive: false, maxSockets: 64 });
        const statuses = await Promise.all(
          Array.from({ length: 40 }, (_, i) => {
            const id = `0190f5e4-5f6a-7000-8000-${String(round * 100 + i).padStart(12, '0')}`;
            ids.push(id);
            const body = JSON.stringify({
              type: 'pageview',
              id,
              data: { session_id: `s${i}`, visitor_fingerprint: `v${i}`, url: 'https://example.com/' },
            });
            return post(gateway.url, token, body, agent);
          }),
        );
        agent.destroy();
        expect(statuses.every((s) => s === 202)).toBe(true);
      }
      // Refusals (invalid records: 400) over new connections, so that both loops count some.
      for (let round = 0; round < 2; round++) {
        const agent = new Agent({ keepAlive: false, maxSockets: 64 });
        const invalid = JSON.stringify({ type: 'pageview', data: { url: 42 } });
        const statuses = await Promise.all(
          Array.from({ length: 30 }, () => post(gateway.url, token, invalid, agent)),
        );
        agent.destroy();
        expect(statuses.every((s) => s === 400)).toBe(true);
      }
      const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
      const perWorker = admittedByWorker(metrics);
      expect(Object.keys(perWorker).sort()).toEqual(['0', '1']);
      expect((perWorker['0'] ?? 0) + (perWorker['1'] ?? 0)).toBe(220);
      expect(perWorker['0']).toBeGreaterThan(0);
      expect(perWorker['1']).toBeGreaterThan(0);
      expect(metrics).toMatch(/^tally_ingest_requests_total\{status="202",type="pageview"\} 160$/m);
      expect((await fetch(`${gateway.adminUrl}/readyz`)).status).toBe(200);

      await gateway.close();
      closed = true;
      // Each loop flushed its refusals at close (REFUSAL_FLUSH_MS is a minute): all 60 arrived, once.
      const store = new LmdbStateStore(dir);
      try {
        const counts = await new RefusalCounts(store).read('workers-project', 0);
        expect(counts.reduce((sum, c) => sum + (c.status === 400 ? c.count : 0), 0)).toBe(60);
      } finally {
        await store.close();
      }
      // Closed: the writer lock is free, and every acknowledged record is in the log.
      const log = openEmbeddedLog({ path: join(dir, 'log'), writer: true });
      try {
        const stored = await recordsIn(log, ids.length);
        expect(stored.map((r) => r.id).sort()).toEqual([...ids].sort());
      } finally {
        await log.close();
      }
    } finally {
      if (!closed) await gateway.close();
    }
  },
);

it.skipIf(!reusePortSupported())(
  `two event loops on one port count one client's requests together${reusePortSupported() ? '' : ` (skipped: Node.js ${process.versions.node} has no reusePort)`}`,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-workers-'));
    dirs.push(dir);
    const config = localConfig(dir, {
      GATEWAY_WORKERS: '2',
      RATE_LIMIT_PER_HOUR: '60',
    });
    const gateway = await startGatewayService(config, pino({ level: 'silent' }));
    try {
      // A new connection per request: the kernel spreads them over both loops' sockets.
      const agent = new Agent({ keepAlive: false, maxSockets: 16 });
      const statuses: Record<number, number> = {};
      for (let round = 0; round < 10; round++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => post(gateway.url, 'no-such-token', '{}', agent)),
        );
        for (const status of answers) statuses[status] = (statuses[status] ?? 0) + 1;
      }
      agent.destroy();
      expect(statuses).toEqual({ 401: 60, 429: 140 });
      const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
      const admitted = [...metrics.matchAll(/^tally_gateway_admitted_total\{worker="(\d+)"\} (\d+)$/gm)];
      expect(admitted.map((m) => Number(m[2])).every((count) => count > 0)).toBe(true);
      expect(admitted).toHaveLength(2);
    } finally {
      await gateway.close();
    }
  },
);
