// `tally annotations add|list|remove` on an LMDB store in a temporary directory: what is added is listed
// (and is what the dashboard's API reads: the same ProjectStore), removed by id; a project no token was
// ever made for, a bad date or no text is refused and adds nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '@tally/config';
import { LmdbStateStore, ProjectStore } from '@tally/state-store';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAnnotations } from './annotations.ts';
import { UsageError } from './usage-error.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-annotations-'));
const config = loadConfig({ TALLY_DATA_DIR: dir });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stored = async (project: string) => {
  const store = new LmdbStateStore(dir);
  try {
    return await new ProjectStore(store).annotations(project);
  } finally {
    await store.close();
  }
};
const annotations = (args: string[]) => runAnnotations(config, args, parseArgs);

describe('tally annotations', () => {
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  beforeAll(async () => {
    const tokens = new FileTokenStore(dir);
    await tokens.create('shop', 'public');
    await tokens.close();
  });

  it('adds, lists (text and --json) and removes a note', async () => {
    expect(await annotations(['add', '--project', 'shop', '--date', '2026-03-01', 'v2', 'deployed'])).toBe(0);
    const [note] = await stored('shop');
    expect(note).toMatchObject({ date: '2026-03-01', text: 'v2 deployed', created_by: 'cli' });
    out.mockClear();
    expect(await annotations(['list', '--project', 'shop', '--json'])).toBe(0);
    expect(JSON.parse(String(out.mock.calls[0]?.[0]))).toEqual([note]);
    out.mockClear();
    expect(await annotations(['list', '--project', 'shop'])).toBe(0);
    expect(String(out.mock.calls[0]?.[0])).toBe(`${note?.id}  2026-03-01  v2 deployed  (cli)\n`);
    expect(await annotations(['remove', note?.id as string, '--project', 'shop'])).toBe(0);
    expect(await stored('shop')).toEqual([]);
    expect(await annotations(['remove', note?.id as string, '--project', 'shop'])).toBe(1);
  });

  it('refuses an unknown project, a bad date and no text, and adds nothing', async () => {
    await expect(annotations(['add', '--project', 'shpo', '--date', '2026-03-01', 'x'])).rejects.toThrow(
      /unknown project "shpo"/,
    );
    for (const args of [
      ['add', '--project', 'shop', '--date', '2026-02-30', 'x'],
      ['add', '--project', 'shop', 'x'],
      ['add', '--project', 'shop', '--date', '2026-03-01'],
      ['list'],
      ['remove', '--project', 'shop'],
      ['rename', '--project', 'shop'],
    ]) {
      await expect(annotations(args), args.join(' ')).rejects.toBeInstanceOf(UsageError);
    }
    expect(await stored('shop')).toEqual([]);
    expect(await stored('shpo')).toEqual([]);
  });
});
