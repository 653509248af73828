// A damaged records.mdb (cut short, or its meta pages garbled) is refused when the log is opened, with an
// error naming the file, in a real child process: before, LMDB mapped it and the process died of SIGBUS
// (truncated) or SIGSEGV (garbled) at the first read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { damageFile, runInChild } from '@tally/state-files/testing';
import { afterEach, expect, it } from 'vitest';
import { testRecord } from '../conformance.ts';
import { openEmbeddedLog } from './embedded-log.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it.each([
  'truncated',
  'garbled',
] as const)('refuses a %s records.mdb at open, naming it (no signal)', async (how) => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-damaged-log-'));
  dirs.push(dir);
  const path = join(dir, 'log');
  const log = openEmbeddedLog({ path, writer: true });
  await log.append(Array.from({ length: 2000 }, (_, i) => testRecord(i % 2 ? 'pageview' : 'event')));
  await log.close();
  const file = join(path, 'records.mdb');
  damageFile(file, how);

  const outcome = runInChild(`
    import { openEmbeddedLog } from '@tally/log';
    const log = openEmbeddedLog({ path: ${JSON.stringify(path)} });
    console.log((await log.consumer({ group: 'g' }).poll({ max: 5000 })).length);
    await log.close();
  `);
  expect(outcome.signal).toBeNull();
  expect(outcome.status).toBe(1);
  expect(outcome.stderr).toContain(`DamagedStateFileError: ${file} is damaged (`);
  expect(outcome.stderr).toContain('restore it from a backup');
});
