// The record log a dashboard of its own opens for the health view (health-log.ts), on a real embedded log
// beside its writer: it reads the groups' backlog without taking the writer's place, and where no log is
// it fails (the view says unavailable) instead of creating an empty one that would show no lag.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { openEmbeddedLog } from '@tally/log';
import { decodedOnly, testRecord } from '@tally/log/conformance';
import { afterEach, expect, it } from 'vitest';
import { ownHealthLog } from './health-log.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-health-log-'));
  dirs.push(dir);
  return dir;
};

it("reads the embedded log's backlog beside its writer, which keeps appending", async () => {
  const dir = tempDir();
  const writer = openEmbeddedLog({ path: join(dir, 'log'), writer: true });
  const records = [0, 1, 2].map(() => testRecord('pageview'));
  await writer.append(records);
  const consumer = writer.consumer({ group: 'analytics', topics: ['pageview'] });
  const [first] = decodedOnly(await consumer.poll({ max: 1, waitMs: 1000 }));
  await consumer.commit([first as NonNullable<typeof first>]);
  await consumer.close();

  const reader = ownHealthLog(loadConfig({ TALLY_DATA_DIR: dir }));
  try {
    expect(await reader.backlog()).toEqual([
      { group: 'analytics', topic: 'pageview', lag: 2, oldest_at: records[1]?.received_at },
    ]);
    expect(await reader.deadLetters.list()).toEqual([]);
    await writer.append([testRecord('pageview')]); // the writer is still the writer
    expect((await reader.backlog())[0]?.lag).toBe(3);
  } finally {
    await reader.close();
    await writer.close();
  }
});

it('fails where there is no log, and creates none', async () => {
  const dir = tempDir();
  const reader = ownHealthLog(loadConfig({ TALLY_DATA_DIR: dir }));
  await expect(reader.backlog()).rejects.toThrow(/no embedded record log/);
  expect(existsSync(join(dir, 'log'))).toBe(false);
  await reader.close();
});
