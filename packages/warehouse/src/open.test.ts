// A process that imports the warehouse port loads no backend: neither chDB's native library nor its module,
// nor @clickhouse/client, until it opens one, and opening one loads that one (which shows that the check
// sees what it looks for).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { backendsLoadedBy } from './testing.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-open-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it('imports @tally/warehouse without chDB or @clickhouse/client, and loads each when its backend is opened', async () => {
  const marks = await backendsLoadedBy(`
    const { openChdbWarehouse, openClickHouseWarehouse } = await import('@tally/warehouse');
    mark('imported');
    // Port 9 on loopback (discard): nothing listens; the client is loaded, the ping refused.
    await openClickHouseWarehouse({ url: 'http://127.0.0.1:9', database: 'x', requestTimeoutMs: 2000 }).catch(
      () => undefined,
    );
    mark('clickhouse');
    const chdb = await openChdbWarehouse({ dataDir: ${JSON.stringify(dataDir)}, database: 'x' });
    await chdb.close();
    mark('chdb');`);
  expect(marks.imported).toEqual({ chdbMapped: false, chdb: false, clickhouseClient: false });
  expect(marks.clickhouse).toEqual({ chdbMapped: false, chdb: false, clickhouseClient: true });
  expect(marks.chdb).toEqual({ chdbMapped: true, chdb: true, clickhouseClient: true });
});
