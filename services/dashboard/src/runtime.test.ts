// startDashboard as a dashboard of its own starts it: its warehouse reached the way the CLI reaches it
// (reachWarehouse), so a query endpoint that a killed `npm start` left published (the file outlived its
// process, its pid now another's) does not stop it: it opens the data directory's warehouse itself.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { FileTokenStore } from '@tally/tokens';
import { publishEndpoint, readPublishedEndpoint } from '@tally/warehouse-http';
import { pino } from 'pino';
import { afterAll, expect, it } from 'vitest';
import { startDashboard } from './runtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-dashboard-runtime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A port on which nothing listens (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

it('opens the data directory’s warehouse when the published endpoint is stale, as the CLI does', async () => {
  const credentials = { user: 'tally_writer', password: 'secret' };
  // This process's pid, so that the file reads as published by a running process, and a URL nobody answers.
  publishEndpoint(dir, {
    url: `http://127.0.0.1:${await closedPort()}`,
    ...credentials,
    analyst: { user: 'tally_analyst', password: 'secret' },
    pid: process.pid,
  });
  expect(readPublishedEndpoint(dir)).not.toBeNull();
  const key = (await new FileTokenStore(dir).create('site', 'read')).token;

  const dashboard = await startDashboard(
    loadConfig({
      TALLY_DATA_DIR: dir,
      DASHBOARD_PORT: '0',
      DASHBOARD_HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    }),
    { logger: pino({ level: 'silent' }) },
  );
  try {
    expect(existsSync(join(dir, 'warehouse'))).toBe(true); // chDB's directory, migrated
    const summary = await fetch(
      `${dashboard.url}/api/v1/projects/site/traffic/summary?from=2026-05-01&to=2026-05-07`,
      {
        headers: { authorization: `Bearer ${key}` },
      },
    );
    expect(summary.status).toBe(200);
  } finally {
    await dashboard.close();
  }
});
