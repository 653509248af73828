import { mkdtempSync, readFileSync } from 'node:fs';
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
  const stored = readFileSync(join(dir, 'visitor-salt.json'), 'utf8');
  expect(JSON.parse(stored).day).toBe('2026-11-21');
  expect(stored).not.toContain('203.0.113.7');
  // Another process with the same data directory derives the same id.
  const again = new VisitorIds(new FileSaltStore(dir));
  expect(await again.derive('shop', '203.0.113.7', 'UA/1', DAY2)).toBe(
    await ids.derive('shop', '203.0.113.7', 'UA/1', DAY2),
  );
});
