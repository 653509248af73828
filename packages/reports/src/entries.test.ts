// A process that imports the reports (every entry point) loads no warehouse backend: the reports take the
// warehouse they are handed, and chDB's native library or @clickhouse/client come only with its opening.
import { backendsLoadedBy } from '@tally/warehouse/testing';
import { expect, it } from 'vitest';

it('imports every entry point of @tally/reports without chDB or @clickhouse/client', async () => {
  const marks = await backendsLoadedBy(`
    for (const entry of ['traffic', 'revenue', 'tables', 'calendar', 'ingestion-health'])
      await import(\`@tally/reports/\${entry}\`);
    mark('imported');`);
  expect(marks.imported).toEqual({ chdbMapped: false, chdb: false, clickhouseClient: false });
});
