// The gateway thread of `npm start`: it serves, drains and ends on close; a failure at start (here: the
// record log's writer lock held) rejects the start, ends the thread and leaves the lock to its holder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { openEmbeddedLog } from '@tally/log';
import { afterEach, expect, it } from 'vitest';
import { startGatewayThread } from './gateway-threads.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function config() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-thread-'));
  dirs.push(dir);
  return loadConfig({
    TALLY_DATA_DIR: dir,
    PORT: '0',
    ADMIN_PORT: '0',
    DASHBOARD_PORT: '0',
    DASHBOARD_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
  });
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
