// The warehouse's stored passwords (warehouse-users.json): made once, 0600, and kept; a file that is not
// what Tally wrote (garbled JSON, or no passwords in it) is refused with an error naming it and left as it
// is, never silently replaced with new passwords that lock out every configured tool.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DamagedStateFileError } from '@tally/state-files';
import { afterEach, expect, it } from 'vitest';
import { warehouseCredentials } from './endpoint.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-credentials-'));
  dirs.push(dir);
  return dir;
}

it('makes the credentials once, in a file readable by its owner only, and keeps them', () => {
  const dir = dataDir();
  const made = warehouseCredentials(dir);
  expect(statSync(join(dir, 'warehouse-users.json')).mode & 0o777).toBe(0o600);
  expect(warehouseCredentials(dir)).toEqual(made);
});

it.each([
  ['garbled JSON', '{"writer":{"user":"tally","password":"s3', /not JSON: /],
  [
    'JSON without passwords',
    '{"writer":{"user":"tally"}}',
    /no writer and analyst user with a password in it/,
  ],
])('refuses %s, naming the file, and leaves it as it is', (_name, content, problem) => {
  const dir = dataDir();
  const file = join(dir, 'warehouse-users.json');
  writeFileSync(file, content, { mode: 0o600 });
  let error: unknown;
  try {
    warehouseCredentials(dir);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(DamagedStateFileError);
  expect((error as Error).message.startsWith(`${file} is damaged (`)).toBe(true);
  expect((error as Error).message).toMatch(problem);
  expect((error as Error).message).toContain('delete it to have new warehouse passwords made');
  expect(readFileSync(file, 'utf8')).toBe(content);
});
