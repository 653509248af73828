// prepareReland (tally warehouse reland) on real chDB with the analytics lander: when rows of events were
// lost (their ids still in record_ids) and ids of record_ids were lost (their rows still in events), a
// redelivery of every record after it lands each lost row once and copies nothing: record_ids is made to
// say exactly what the tables hold first. (test/warehouse-damage.test.ts does it with a part damaged on
// disk and the whole process.)
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testRecord } from '@tally/log/conformance';
import { aPolledMessage } from '@tally/log/testing';
import { migrate, openChdbWarehouse, prepareReland } from '@tally/warehouse';
import { afterEach, expect, it } from 'vitest';
import { analyticsLander } from './consumer.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('lands lost rows again once, and does not copy rows whose ids were lost, after prepareReland', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-reland-'));
  dirs.push(dir);
  const warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  try {
    await migrate(warehouse);
    const lander = analyticsLander(warehouse);
    const records = Array.from({ length: 4 }, (_, i) =>
      testRecord('pageview', {
        id: randomUUID(),
        project_id: 'reland',
        data: { session_id: 's1', visitor_fingerprint: 'v1', url: `https://shop.example/${i}` },
      }),
    );
    const deliver = () =>
      lander.land(
        records.map((record, offset) => {
          const message = aPolledMessage(record, { offset });
          return { message, row: lander.prepare(message) };
        }),
      );
    await deliver();
    const [lostRow, lostId] = records;
    await warehouse.command("DELETE FROM events WHERE project_id = 'reland' AND id = {id:String}", {
      id: lostRow?.id as string,
    });
    await warehouse.command(
      "DELETE FROM record_ids WHERE project_id = 'reland' AND toString(id) = {id:String}",
      {
        id: lostId?.id as string,
      },
    );

    const prepared = await prepareReland(warehouse);
    expect(prepared).toMatchObject({ restored: 1, removed: 1 });
    await deliver();

    const rows = await warehouse.query<{ id: string; copies: number }>(
      "SELECT id, count() AS copies FROM events WHERE project_id = 'reland' GROUP BY id ORDER BY id",
    );
    expect(rows).toEqual(
      records.map((r) => ({ id: r.id, copies: 1 })).sort((a, b) => a.id.localeCompare(b.id)),
    );
    const ids = await warehouse.query<{ id: string; copies: number }>(
      "SELECT toString(id) AS id, count() AS copies FROM record_ids WHERE project_id = 'reland' GROUP BY id ORDER BY id",
    );
    expect(ids).toEqual(rows);
  } finally {
    await warehouse.close();
  }
});
