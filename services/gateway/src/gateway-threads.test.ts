// The gateway thread of `npm start`: it serves, drains and ends on close; a failure at start (here: the
// record log's writer lock held) rejects the start, ends the thread and leaves the lock to its holder.
// Threads of one process share the rate limit's counters: a client gets its limit, not one per thread.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { afterEach, expect, it, vi } from 'vitest';
import {
  gatewayLoops,
  MEMORY_PER_LOOP_MIB,
  processMemoryMiB,
  reusePortSupported,
  sharedByThreads,
  startGatewayThread,
} from './gateway-threads.ts';
import { localConfig } from './testing.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function config(env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tally-thread-'));
  dirs.push(dir);
  return localConfig(dir, { DASHBOARD_PORT: '0', DASHBOARD_HOST: '127.0.0.1', ...env });
}

it('serves from its thread, and closes: drained, log released, thread ended', async () => {
  const cfg = config();
  const gateway = await startGatewayThread(cfg);
  expect(await gateway.health()).toEqual({ ok: true });
  expect((await gateway.metrics()).map((m: { name: string }) => m.name)).toContain(
    'tally_ingest_requests_total',
  );
  const res = await fetch(`${gateway.url}/api/ingest`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  expect(res.status).toBe(401);
  await gateway.close();
  await expect(fetch(`${gateway.url}/api/ingest`, { method: 'POST' })).rejects.toThrow();
  // The thread released the log's writer lock: this process can write it now.
  const log = openEmbeddedLog({ path: join(cfg.TALLY_DATA_DIR, 'log'), writer: true });
  await log.close();
});

it('rejects its start when the log has another writer, and ends the thread', async () => {
  const cfg = config();
  const holder = openEmbeddedLog({ path: join(cfg.TALLY_DATA_DIR, 'log'), writer: true });
  try {
    await expect(startGatewayThread(cfg)).rejects.toThrow(
      `being written by another process (pid ${process.pid})`,
    );
  } finally {
    await holder.close();
  }
});

/** Sends `count` requests (no token: a cheap 401 each, counted all the same), spread over the URLs. */
async function statusesOf(urls: string[], count: number): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  const client = async () => {
    while (next < count) {
      const url = urls[next++ % urls.length] as string;
      const res = await fetch(`${url}/api/ingest`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  return statuses;
}

it('counts one client exactly across two threads that share the rate-limit table', async () => {
  const cfg = config({ RATE_LIMIT_PER_HOUR: '60', REDIS_URL: '' });
  const log = openEmbeddedLog({ path: join(cfg.TALLY_DATA_DIR, 'log'), writer: true });
  const shared = sharedByThreads(cfg);
  expect(shared.rateLimits).not.toBeNull();
  const threads = await Promise.all(
    ['0', '1'].map((worker) => startGatewayThread(cfg, { worker, appendLog: log, shared })),
  );
  // Each thread on a port of its own (no reusePort needed): half of the requests go to each, concurrently.
  const separate = await Promise.all(
    ['0', '1'].map((worker) => startGatewayThread(cfg, { worker, appendLog: log })),
  );
  try {
    expect(
      await statusesOf(
        threads.map((thread) => thread.url),
        200,
      ),
    ).toEqual({ 401: 60, 429: 140 });
    // Without the shared table each thread counts on its own: the client gets twice its limit.
    expect(
      await statusesOf(
        separate.map((thread) => thread.url),
        200,
      ),
    ).toEqual({ 401: 120, 429: 80 });
  } finally {
    await Promise.all([...threads, ...separate].map((thread) => thread.close()));
    await log.close();
  }
});

it('runs one loop per core by default where Node.js can share the port, else one and says why', () => {
  const roomy = { cores: 4, memoryMiB: 24_000 };
  if (reusePortSupported()) {
    expect(gatewayLoops({ GATEWAY_WORKERS: 0 }, roomy)).toEqual({ loops: 4, mainLoop: false, note: null });
    expect(gatewayLoops({ GATEWAY_WORKERS: 3 }, roomy)).toEqual({ loops: 3, mainLoop: false, note: null });
    // On this machine, as the gateway's processes call it.
    expect(gatewayLoops({ GATEWAY_WORKERS: 0 }).loops).toBe(
      Math.min(availableParallelism(), Math.max(1, Math.floor(processMemoryMiB() / MEMORY_PER_LOOP_MIB))),
    );
  } else {
    const byDefault = gatewayLoops({ GATEWAY_WORKERS: 0 }, roomy);
    expect(byDefault.loops).toBe(1);
    expect(byDefault.note?.level).toBe('info');
    expect(byDefault.note?.message).toContain('reusePort needs Node.js 22.12 or newer');
    expect(gatewayLoops({ GATEWAY_WORKERS: 3 }, roomy)).toEqual({
      loops: 1,
      mainLoop: false,
      note: { level: 'warn', message: expect.stringContaining('not GATEWAY_WORKERS=3') },
    });
  }
  expect(gatewayLoops({ GATEWAY_WORKERS: 1 }, roomy)).toEqual({ loops: 1, mainLoop: false, note: null });
});

it("runs by default only as many loops as the container's memory holds, and says so", () => {
  const loops = (cores: number, memoryMiB: number) =>
    gatewayLoops({ GATEWAY_WORKERS: 0 }, { cores, memoryMiB });
  const expected = (n: number) => (reusePortSupported() ? n : 1);
  // A container of 150 or 200 MiB: one loop; two from 256 MiB, where they peak at ~150 MiB under load.
  for (const memoryMiB of [150, 200, 2 * MEMORY_PER_LOOP_MIB - 1]) {
    const chosen = loops(2, memoryMiB);
    expect(chosen.loops, `${memoryMiB} MiB`).toBe(1);
    if (reusePortSupported()) {
      expect(chosen.note?.level).toBe('info');
      expect(chosen.note?.message).toContain(`running 1 gateway event loop, not one per core (2)`);
      expect(chosen.note?.message).toContain(`may use ${memoryMiB} MiB`);
    }
  }
  // Two loops from 256 MiB: until there is room for a third isolate, the main thread is one of them.
  expect(loops(2, 256)).toEqual({ loops: expected(2), mainLoop: reusePortSupported(), note: null });
  expect(loops(2, 383)).toEqual({ loops: expected(2), mainLoop: reusePortSupported(), note: null });
  expect(loops(2, 384)).toEqual({ loops: expected(2), mainLoop: false, note: null });
  expect(loops(8, 3 * MEMORY_PER_LOOP_MIB + 10).loops).toBe(expected(3));
  // Too little for even one: still one, never none.
  expect(loops(2, 64).loops).toBe(1);
  // A number asked for is run as asked, whatever the memory.
  expect(gatewayLoops({ GATEWAY_WORKERS: 2 }, { cores: 2, memoryMiB: 150 })).toEqual({
    loops: expected(2),
    mainLoop: reusePortSupported(),
    note: reusePortSupported() ? null : expect.objectContaining({ level: 'warn' }),
  });
});

it("reads the process's memory as its container's limit, or the machine's", () => {
  const machine = Math.floor(totalmem() / 2 ** 20);
  const limit = vi.spyOn(process, 'constrainedMemory');
  try {
    limit.mockReturnValue(200 * 2 ** 20); // a container of 200 MiB
    expect(processMemoryMiB()).toBe(200);
    limit.mockReturnValue(0); // no limit known
    expect(processMemoryMiB()).toBe(machine);
    limit.mockReturnValue(2 ** 44); // "unlimited", as a cgroup without a limit reads
    expect(processMemoryMiB()).toBe(machine);
  } finally {
    limit.mockRestore();
  }
});
