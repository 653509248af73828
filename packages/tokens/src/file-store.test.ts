// The token file: a garbled tokens.json is refused with an error naming it, by reads and writes alike,
// and never replaced (a write over it would drop every token it holds).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DamagedStateFileError } from '@tally/state-files';
import { afterEach, expect, it } from 'vitest';
import { FileTokenStore } from './file-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('refuses a garbled tokens.json with an error naming it, and does not replace it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-tokens-'));
  dirs.push(dir);
  const file = join(dir, 'tokens.json');
  writeFileSync(file, '{"tokens": [{"id": "t1",', { mode: 0o600 });
  const store = new FileTokenStore(dir);
  // One at a time: a rejection nobody awaits yet is an unhandled one.
  for (const attempt of [() => store.list(), () => store.create('shop', 'public'), () => store.projects()]) {
    const error = await attempt().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DamagedStateFileError);
    expect((error as Error).message).toMatch(
      new RegExp(`^${file} is damaged \\(not JSON: .*\\); mend the JSON`),
    );
  }
  expect(readFileSync(file, 'utf8')).toBe('{"tokens": [{"id": "t1",');
});

it('writes tokens.json 0600 in a directory it creates 0700', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'tally-tokens-')), 'data');
  dirs.push(join(dir, '..'));
  await new FileTokenStore(dir).create('shop', 'public');
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  expect(statSync(join(dir, 'tokens.json')).mode & 0o777).toBe(0o600);
});
