// A process that imports the HTTP interface's package for its published endpoint (the CLI, a dashboard of
// its own) loads no chDB: the server's modules come with serveClickHouseHttp's first call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backendsLoadedBy } from '@tally/warehouse/testing';
import { afterAll, expect, it } from 'vitest';

const dataDir = mkdtempSync(join(tmpdir(), 'tally-http-import-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it('imports @tally/warehouse-http without chDB, and loads it when the interface is served', async () => {
  const marks = await backendsLoadedBy(`
    const { readPublishedEndpoint, serveClickHouseHttp } = await import('@tally/warehouse-http');
    readPublishedEndpoint(${JSON.stringify(dataDir)});
    mark('imported');
    const http = await serveClickHouseHttp({ dataDir: ${JSON.stringify(dataDir)} });
    await http.close();
    mark('served');`);
  expect(marks.imported).toEqual({ chdbMapped: false, chdb: false, clickhouseClient: false });
  expect(marks.served).toMatchObject({ chdbMapped: true, chdb: true, clickhouseClient: false });
});
