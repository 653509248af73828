// What a new user trips over with the CLI and the processes, each checked as they would meet it: the data
// directory found from a subdirectory, SQL in the format it names, reports that say when a range is reversed
// or a project unknown and print every month of a range, readable traffic text, and start-up failures that
// are one line and leave nothing behind.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, SOURCE_NODE_ARGS, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const run = promisify(execFile);
const TALLY = join(ROOT, 'packages/cli/bin/tally.js');

/** `tally …` run from `cwd`, with no Tally setting from the environment (as a user's shell). */
async function tallyIn(cwd: string, args: string[], env: Record<string, string> = {}) {
  const {
    TALLY_DATA_DIR: _d,
    TALLY_ENV_FILE: _f,
    REDIS_URL: _r,
    KAFKA_BROKERS: _k,
    SCHEMA_REGISTRY_URL: _s,
    CLICKHOUSE_URL: _c,
    ...rest
  } = process.env;
  return run(process.execPath, [TALLY, ...args], { cwd, env: { ...rest, ...env }, timeout: 60_000 });
}

describe('the CLI', () => {
  let base: string;
  let running: TallyProcess;

  beforeAll(async () => {
    base = tempDataDir();
    const dataDir = join(base, '.tally');
    const store = new FileTokenStore(dataDir);
    const { token } = await store.create('site', 'public');
    await store.create('quiet', 'secret');
    await store.close();
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    const today = Date.now();
    for (const [path, source] of [
      ['/', 'https://www.google.com/'],
      ['/pricing', ''],
    ]) {
      const res = await send(running.url, token, {
        type: 'pageview',
        data: {
          session_id: 's1',
          url: `https://shop.example${path}`,
          referrer: source,
          utm_campaign: 'spring',
          timestamp: today,
        },
      });
      expect(res.status).toBe(202);
    }
    await send(running.url, token, {
      type: 'event',
      data: { session_id: 's1', event_name: 'signup', timestamp: today },
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { stdout } = await tallyIn(base, [
        'sql',
        "SELECT count() AS n FROM events WHERE project_id = 'site'",
      ]);
      if (stdout.includes('"n":3')) break;
      if (Date.now() > deadline) throw new Error(`records did not land: ${stdout}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  afterAll(async () => {
    expect(await running?.stop()).toBe(0);
  });

  it('finds the data directory from a subdirectory, and creates none there', async () => {
    const sub = join(base, 'examples', 'deeper');
    mkdirSync(sub, { recursive: true });
    const { stdout } = await tallyIn(sub, ['tokens', 'list']);
    expect(stdout).toContain('site');
    expect(stdout).not.toMatch(/no tokens/i);
    const sql = await tallyIn(sub, ['sql', "SELECT count() AS n FROM events WHERE project_id = 'site'"]);
    expect(sql.stdout).toBe('{"n":3}\n');
    expect(readdirSync(sub)).toEqual([]);
    expect(existsSync(join(base, 'examples', '.tally'))).toBe(false);
  });

  it('prints a query in the format it names', async () => {
    const csv = await tallyIn(base, [
      'sql',
      "SELECT path, count() AS n FROM events WHERE project_id = 'site' AND type = 'pageview' GROUP BY path ORDER BY path FORMAT CSV",
    ]);
    expect(csv.stdout).toBe('"/",1\n"/pricing",1\n');
    const lines = await tallyIn(base, ['sql', 'SELECT 1 AS one FORMAT JSONEachRow']);
    expect(lines.stdout).toBe('{"one":1}\n');
  });

  it('reports traffic as readable text with headers: pages, sources, campaigns, events; the last 30 days by default', async () => {
    const { stdout } = await tallyIn(base, ['report', 'traffic/overview', '--project', 'site']);
    for (const heading of ['Totals', 'Pages', 'Sources', 'Campaigns', 'Events'])
      expect(stdout).toContain(`${heading}\n`);
    expect(stdout).toMatch(/pageviews\s+visitors\s+sessions\s+events/);
    expect(stdout).toContain('Google');
    expect(stdout).toContain('Direct / None');
    expect(stdout).toContain('spring');
    expect(stdout).toContain('signup');
  });

  it('prints every month of a revenue range, with and without --currency, in text and JSON, and says when there is no revenue', async () => {
    const args = ['report', 'mrr', '--project', 'quiet', '--from', '2026-01', '--to', '2026-03'];
    for (const extra of [[], ['--currency', 'USD']]) {
      const json = JSON.parse((await tallyIn(base, [...args, ...extra, '--json'])).stdout) as Array<{
        month: string;
      }>;
      expect(json.map((m) => m.month)).toEqual(['2026-01', '2026-02', '2026-03']);
      const text = await tallyIn(base, [...args, ...extra]);
      for (const month of ['2026-01', '2026-02', '2026-03']) expect(text.stdout).toContain(month);
      expect(text.stderr).toContain('no revenue for quiet from 2026-01 to 2026-03');
    }
    const byDefault = JSON.parse(
      (await tallyIn(base, ['report', 'mrr', '--project', 'quiet', '--json'])).stdout,
    );
    expect(byDefault).toHaveLength(12);
  });

  it('prints a sign-in link on the port the running dashboard listens on, not the default 8082', async () => {
    const { stdout } = await tallyIn(base, ['users', 'add', 'owner@example.com', '--project', 'site']);
    const link = stdout.trim().split('\n').at(-1) ?? '';
    const dashboard = new URL(running.endpoints.dashboardUrl ?? '');
    expect(new URL(link).port).toBe(dashboard.port);
    expect(dashboard.port).not.toBe('8082');
    // The link opens the dashboard's set-password page.
    const page = await fetch(new URL(link).origin + new URL(link).pathname);
    expect(page.status).toBe(200);
  });

  it('refuses a reversed range and an unknown project with a message', async () => {
    await expect(
      tallyIn(base, ['report', 'mrr', '--project', 'quiet', '--from', '2026-05', '--to', '2026-01']),
    ).rejects.toMatchObject({
      stderr: expect.stringContaining('--from 2026-05 is after --to 2026-01'),
    });
    await expect(tallyIn(base, ['report', 'traffic', '--project', 'nope'])).rejects.toMatchObject({
      stderr: expect.stringContaining('unknown project "nope"'),
    });
  });
});

describe('a failed start', () => {
  /** Starts npm start's process and resolves with its exit code and output once it exits. */
  function startExpectingFailure(env: Record<string, string>) {
    const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, 'services/embedded/src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...pipelineEnv(env) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.once('exit', (code) => resolve({ code, stdout, stderr })),
    );
  }
  const oneLine = (text: string) => text.trim().split('\n').filter(Boolean);

  it('says in one line that a port is taken, and leaves no lock, endpoint or readiness file behind', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const dataDir = tempDataDir();
    try {
      const readyFile = join(dataDir, 'ready.json');
      const result = await startExpectingFailure({
        TALLY_DATA_DIR: dataDir,
        PORT: String(port),
        TALLY_READY_FILE: readyFile,
      });
      expect(result.code).toBe(1);
      expect(oneLine(result.stderr)).toEqual([
        expect.stringMatching(new RegExp(`^tally: port ${port} .* is in use`)),
      ]);
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(existsSync(join(dataDir, 'log', 'writer.lock'))).toBe(false);
      expect(existsSync(join(dataDir, 'warehouse-http.json'))).toBe(false);
      expect(existsSync(readyFile)).toBe(false);
    } finally {
      taken.close();
    }
  });

  it('says in one line that a setting is invalid, or that the data directory is held by another process', async () => {
    const invalid = await startExpectingFailure({ TALLY_DATA_DIR: tempDataDir(), PORT: 'eighty' });
    expect(invalid.code).toBe(1);
    expect(oneLine(invalid.stderr)).toEqual([expect.stringMatching(/^tally: invalid configuration: .*PORT/)]);

    const dataDir = tempDataDir();
    const first = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    try {
      const second = await startExpectingFailure({ TALLY_DATA_DIR: dataDir });
      expect(second.code).toBe(1);
      expect(oneLine(second.stderr)).toEqual([
        expect.stringMatching(/^tally: .*in use by another process \(pid \d+\)/),
      ]);
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });
});
