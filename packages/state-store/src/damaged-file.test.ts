// A damaged dashboard.mdb (cut short, or its meta pages garbled) is refused when the store is opened, with
// an error naming the file, in a real child process: before, LMDB mapped it and the process died of a
// signal (SIGBUS, SIGSEGV) at the first read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { damageFile, runInChild } from '@tally/state-files/testing';
import { afterEach, expect, it } from 'vitest';
import { LmdbStateStore } from './lmdb-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it.each([
  'truncated',
  'garbled',
] as const)('refuses a %s dashboard.mdb at open, naming it (no signal)', async (how) => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-damaged-dashboard-'));
  dirs.push(dir);
  const store = new LmdbStateStore(dir);
  for (let i = 0; i < 2000; i++)
    await store.put('sessions', `s${i}`, { user: `u${i}`, pad: 'x'.repeat(200) });
  await store.close();
  const file = join(dir, 'dashboard.mdb');
  damageFile(file, how);

  const outcome = runInChild(`
    import { LmdbStateStore } from '@tally/state-store';
    const store = new LmdbStateStore(${JSON.stringify(dir)});
    console.log((await store.list('sessions')).length);
    await store.close();
  `);
  expect(outcome.signal).toBeNull();
  expect(outcome.status).toBe(1);
  expect(outcome.stderr).toContain(`DamagedStateFileError: ${file} is damaged (`);
  expect(outcome.stderr).toContain('restore it from a backup');
});
