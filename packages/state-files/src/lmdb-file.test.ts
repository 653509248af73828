// checkLmdbFile on real LMDB files written by lmdb-js: a whole file passes (and so does none at all), and a
// file cut short, garbled, or empty is refused with an error that names it and says what to do, but a file
// that another thread is creating (empty for a moment) is waited for.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { open } from 'lmdb';
import { afterEach, expect, it } from 'vitest';
import { DamagedStateFileError } from './damaged-state-file.ts';
import { checkLmdbFile } from './lmdb-file.ts';
import { damageFile } from './testing.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** An LMDB file written by lmdb-js, with `records` records (none: as LMDB creates it, two meta pages). */
async function lmdbFile(records = 2000): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-lmdb-check-'));
  dirs.push(dir);
  const file = join(dir, 'store.mdb');
  const root = open({ path: file, compression: false });
  for (let i = 0; i < records; i++) root.put(`key-${i}`, { value: 'x'.repeat(200), i });
  await root.flushed;
  await root.close();
  return file;
}

it('passes a whole LMDB file, and a file that does not exist yet', async () => {
  const file = await lmdbFile();
  expect(() => checkLmdbFile(file, 'restore it')).not.toThrow();
  expect(() => checkLmdbFile(join(file, '..', 'absent.mdb'), 'restore it')).not.toThrow();
});

it.each([
  ['truncated', /cut short/],
  ['garbled', /not an LMDB meta page/],
] as const)('refuses a %s file, naming it', async (how, problem) => {
  const file = await lmdbFile();
  damageFile(file, how);
  let error: unknown;
  try {
    checkLmdbFile(file, 'restore it from a backup');
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(DamagedStateFileError);
  expect((error as Error).message).toMatch(problem);
  expect((error as Error).message.startsWith(`${file} is damaged (`)).toBe(true);
  expect((error as Error).message).toContain('restore it from a backup');
});

it('refuses an empty file (LMDB would take it for a new one and start empty)', async () => {
  const file = await lmdbFile();
  writeFileSync(file, '');
  expect(() => checkLmdbFile(file, 'restore it', 200)).toThrow(`${file} is damaged (the file is empty)`);
});

it('refuses a file that ends inside its meta pages once it has stayed so', async () => {
  const file = await lmdbFile();
  const whole = readFileSync(file);
  writeFileSync(file, whole.subarray(0, 4096));
  expect(() => checkLmdbFile(file, 'restore it', 200)).toThrow(
    `${file} is damaged (the file ends inside its second meta page (4096 bytes))`,
  );
});

it('waits for a file that another thread is creating: empty, then its first page only, whole at last', async () => {
  // What LMDB writes when it creates a file: its two meta pages (8 KiB), which reach the file a page at a time.
  const fresh = await lmdbFile(0);
  const whole = readFileSync(fresh);
  expect(whole.length).toBe(8192);
  const file = join(dirname(fresh), 'created.mdb');
  writeFileSync(file, '');
  // Another thread writes the first page 300 ms after this one starts checking, and the second 300 ms
  // later: the check, which blocks this thread, must find the file empty, then cut short, and pass it whole.
  const started = new Int32Array(new SharedArrayBuffer(4));
  const creator = new Worker(
    `const { workerData: { file, whole, started } } = require('node:worker_threads');
     const fs = require('node:fs');
     const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
     Atomics.wait(started, 0, 0);
     pause();
     const fd = fs.openSync(file, 'r+');
     fs.writeSync(fd, whole, 0, 4096, 0);
     pause();
     fs.writeSync(fd, whole, 4096, whole.length - 4096, 4096);
     fs.closeSync(fd);`,
    { eval: true, workerData: { file, whole, started } },
  );
  const exited = once(creator, 'exit');
  await once(creator, 'online');
  Atomics.store(started, 0, 1);
  Atomics.notify(started, 0);
  expect(() => checkLmdbFile(file, 'restore it')).not.toThrow();
  expect(await exited).toEqual([0]);
});
