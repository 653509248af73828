// What `npm start`'s process keeps under TALLY_DATA_DIR, on real files: every file it and the CLI create
// is 0600 and every directory 0700 (the record log, the dashboard's store, tokens, salts, the warehouse's
// passwords and endpoint, the lock files and every file of the embedded chDB), on a fresh data directory
// and on one an older Tally left world-readable; and a damaged state file stops the start with one line
// that names it (exit 1, no signal), leaving the file as it was.
import { randomUUID } from 'node:crypto';
import { chmodSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { damageFile } from '@tally/state-files/testing';
import { expect, it } from 'vitest';
import { eventually, spawnWithOutput, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, publishedWarehouse, send, startTallyProcess } from './support/tally-process.ts';

/** The names in a directory; none when it was removed after its parent was listed. */
function namesIn(path: string): string[] {
  try {
    return readdirSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * Every file and directory under `root` (root included) whose permission bits are not 0600 / 0700.
 * While the process runs, chDB writes an insert or a merge into a `tmp_…` part and renames or removes it:
 * a path listed a moment ago may be gone when it is examined, and is skipped (what it became is listed
 * under its new name, or examined by the walk after the process stopped).
 */
function notPrivate(root: string): string[] {
  const wrong: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isSymbolicLink()) return; // chDB links data/<db>/<table> to store/: a link has no mode of its own
    const mode = stat.mode & 0o777;
    if (stat.isDirectory()) {
      if (mode !== 0o700) wrong.push(`${path} ${mode.toString(8)}`);
      for (const name of namesIn(path)) visit(join(path, name));
    } else if (mode !== 0o600) wrong.push(`${path} ${mode.toString(8)}`);
  };
  visit(root);
  return wrong;
}

/** Gives every file and directory under `root` the modes of LMDB's and chDB's defaults under umask 022. */
function makeWorldReadable(root: string): void {
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    chmodSync(path, stat.isDirectory() ? 0o755 : 0o644);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
}

it('creates every file 0600 and every directory 0700 in a fresh data directory, and makes an older one so', async () => {
  const dataDir = join(tempDataDir(), 'data'); // does not exist yet: the CLI creates it
  const env = pipelineEnv({ TALLY_DATA_DIR: dataDir });
  const created = await tally(['tokens', 'create', '--project', 'modes', '--kind', 'public'], env);
  const token = created.trim().split('\n').at(-1) as string;

  const check = async () => {
    const running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    try {
      // No visitor_fingerprint: the gateway derives one, with the day's salt file.
      const id = randomUUID();
      const sent = await send(running.url, token, {
        type: 'pageview',
        id,
        data: { session_id: `s_${id}`, url: 'https://shop.example/' },
      });
      expect(sent.status).toBe(202);
      const warehouse = await publishedWarehouse(dataDir);
      try {
        await eventually(30_000, 'the pageview landing', async () => {
          const rows = await warehouse.query('SELECT id FROM events WHERE id = {id:String}', { id });
          return rows.length === 1;
        });
      } finally {
        await warehouse.close();
      }
      const names = readdirSync(dataDir).sort();
      for (const name of ['dashboard.mdb', 'log', 'tokens.json', 'warehouse', 'warehouse-http.json']) {
        expect(names).toContain(name);
      }
      expect(names.some((name) => /^visitor-salt-\d{4}-\d{2}-\d{2}\.json$/.test(name))).toBe(true);
      expect(readdirSync(join(dataDir, 'log')).sort()).toEqual([
        'records.mdb',
        'records.mdb-lock',
        'writer.lock',
      ]);
      expect(notPrivate(dataDir)).toEqual([]);
    } finally {
      expect(await running.stop('SIGTERM')).toBe(0);
    }
    expect(notPrivate(dataDir)).toEqual([]);
  };

  await check();
  // As an older Tally left it: LMDB's 0664 and chDB's 0644 files under umask 022, in 0755 directories.
  makeWorldReadable(dataDir);
  expect(notPrivate(dataDir)).not.toEqual([]);
  await check();
});

/** Starts npm start's process on `dataDir`; resolves with its exit (code and signal) and its output. */
async function failedStart(
  dataDir: string,
): Promise<{ code: number | null; signal: string | null; output: string }> {
  const { TALLY_ENV_FILE: _f, ...inherited } = process.env;
  const child = spawnWithOutput('services/embedded/src/main.ts', {
    ...inherited,
    ...pipelineEnv({ TALLY_DATA_DIR: dataDir }),
  });
  // A start that is not refused comes up and runs: stopped after 30 s, so the test fails on its answer.
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 30_000);
  const code = await child.exited.finally(() => clearTimeout(timer));
  return { code, signal: child.process.signalCode, output: child.output() };
}

it('refuses to start on a truncated record log, with one line naming the file', async () => {
  const dataDir = tempDataDir();
  const log = openEmbeddedLog({ path: join(dataDir, 'log'), writer: true });
  await log.append(Array.from({ length: 2000 }, () => testRecord('pageview')));
  await log.close();
  const file = join(dataDir, 'log', 'records.mdb');
  damageFile(file, 'truncated');
  const { code, signal, output } = await failedStart(dataDir);
  expect(signal).toBeNull();
  expect(code).toBe(1);
  expect(output).toContain(`tally: ${file} is damaged (`);
});

it('refuses to start on a garbled warehouse-users.json, naming it, and does not replace it', async () => {
  const dataDir = tempDataDir();
  const file = join(dataDir, 'warehouse-users.json');
  writeFileSync(file, '{"writer":{"user":"tally","password":"', { mode: 0o600 });
  const { code, signal, output } = await failedStart(dataDir);
  expect(signal).toBeNull();
  expect(code).toBe(1);
  expect(output).toContain(`tally: ${file} is damaged (not JSON: `);
  expect(readFileSync(file, 'utf8')).toBe('{"writer":{"user":"tally","password":"');
});
