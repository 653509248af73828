import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { describeRecordLogConformance } from '../conformance.ts';
import { openEmbeddedLog } from './embedded-log.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describeRecordLogConformance('embedded (LMDB)', async () => {
  const path = mkdtempSync(join(tmpdir(), 'tally-log-'));
  dirs.push(path);
  let log = openEmbeddedLog({ path });
  return {
    log,
    async reopen() {
      await log.close();
      log = openEmbeddedLog({ path });
      return log;
    },
  };
});
