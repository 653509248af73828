import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { FileSaltStore, VisitorIds } from './visitor-id.ts';

const DAY1 = Date.UTC(2026, 10, 20, 12);
const DAY2 = Date.UTC(2026, 10, 21, 12);

it('derives the same id for one visitor of one project on one day, and another id otherwise', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-salt-'));
  const ids = new VisitorIds(new FileSaltStore(dir));
  const a = await ids.derive('shop', '203.0.113.7', 'UA/1', DAY1);
  expect(a).toMatch(/^[0-9a-f]{32}$/);
  expect(await ids.derive('shop', '203.0.113.7', 'UA/1', DAY1 + 3_600_000)).toBe(a);
  expect(await ids.derive('blog', '203.0.113.7', 'UA/1', DAY1)).not.toBe(a);
  expect(await ids.derive('shop', '203.0.113.8', 'UA/1', DAY1)).not.toBe(a);
  expect(await ids.derive('shop', '203.0.113.7', 'UA/2', DAY1)).not.toBe(a);
  // A new day brings a new salt: the same visitor cannot be followed across days.
  expect(await ids.derive('shop', '203.0.113.7', 'UA/1', DAY2)).not.toBe(a);
  // Only the current day's salt is kept, and the IP is nowhere on disk.
  expect(readdirSync(dir)).toEqual(['visitor-salt-2026-11-21.json']);
  const stored = readFileSync(join(dir, 'visitor-salt-2026-11-21.json'), 'utf8');
  expect(JSON.parse(stored).day).toBe('2026-11-21');
  expect(stored).not.toContain('203.0.113.7');
  // Another process with the same data directory derives the same id.
  const again = new VisitorIds(new FileSaltStore(dir));
  expect(await again.derive('shop', '203.0.113.7', 'UA/1', DAY2)).toBe(
    await ids.derive('shop', '203.0.113.7', 'UA/1', DAY2),
  );
});

it('gives every store of one data directory the same salt when they ask for a new day at once', async () => {
  // GATEWAY_WORKERS event loops each have their own store: the first to create the day's salt wins, and no
  // request fails (two loops once renamed over each other's temporary file and answered 500).
  const dir = mkdtempSync(join(tmpdir(), 'tally-salt-'));
  const stores = Array.from({ length: 16 }, () => new FileSaltStore(dir));
  const salts = await Promise.all(stores.map((store) => store.saltFor('2026-11-21')));
  expect(new Set(salts.map((salt) => salt.toString('hex'))).size).toBe(1);
  expect(readdirSync(dir)).toEqual(['visitor-salt-2026-11-21.json']);
});

it("keeps today's salt from visitor-salt.json, where salts were kept before, and deletes that file", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-salt-'));
  const salt = 'ab'.repeat(32);
  writeFileSync(join(dir, 'visitor-salt.json'), JSON.stringify({ day: '2026-11-21', salt }));
  expect((await new FileSaltStore(dir).saltFor('2026-11-21')).toString('hex')).toBe(salt);
  expect(readdirSync(dir)).toEqual(['visitor-salt-2026-11-21.json']);
});

it("refuses a garbled day's salt file with an error naming it, and leaves it as it is", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-salt-'));
  const file = join(dir, 'visitor-salt-2026-11-21.json');
  writeFileSync(file, '{"day":"2026-11-21","salt":"ab', { mode: 0o600 });
  await expect(new FileSaltStore(dir).saltFor('2026-11-21')).rejects.toThrow(
    `${file} is damaged (not JSON: `,
  );
  expect(readFileSync(file, 'utf8')).toBe('{"day":"2026-11-21","salt":"ab');
});
