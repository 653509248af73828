// A warehouse that lost records is said so, and they are landed again exactly once. On `npm start`'s real
// process and its chDB directory: records land, the process stops, one active part of `events` has its
// data file cut short on disk, and the next start (where chDB detaches the part as broken-on-start and
// used to report ready with the rows gone) is not ready, with the reason, logs it, and the dashboard's
// health answer lists the part. `tally warehouse reland` (Tally stopped), then a start: every record is in
// `events` once (raw rows, no FINAL), record_ids has each id once, and the process is ready again.
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import { expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import {
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
  type TallyProcess,
} from './support/tally-process.ts';

const PROJECT = 'damage';

async function readiness(running: TallyProcess): Promise<{ status: number; body: { detail?: string } }> {
  const res = await fetch(`${running.adminUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as { detail?: string } };
}

it('says a damaged warehouse part lost records (readiness, log, health view), and re-lands them once from the log', async () => {
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  const { token } = await store.create(PROJECT, 'public');
  const { token: readKey } = await store.create(PROJECT, 'read');
  const env = { TALLY_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  const ids: string[] = [];
  const counts = async (running: TallyProcess) => {
    void running;
    const warehouse = await publishedWarehouse(dataDir);
    try {
      const [row] = await warehouse.query<{ rows: number; distinct_ids: number; record_ids: number }>(
        `SELECT (SELECT count() FROM events WHERE project_id = {p:String}) AS rows,
                (SELECT uniqExact(id) FROM events WHERE project_id = {p:String}) AS distinct_ids,
                (SELECT count() FROM record_ids WHERE project_id = {p:String}) AS record_ids`,
        { p: PROJECT },
      );
      return row as { rows: number; distinct_ids: number; record_ids: number };
    } finally {
      await warehouse.close();
    }
  };

  // Three waves, each landed before the next: three inserts, so several parts of events.
  const first = await startTallyProcess(env);
  let part: { name: string; rows: number };
  try {
    for (let wave = 0; wave < 3; wave++) {
      for (let i = 0; i < 10; i++) {
        const id = randomUUID();
        ids.push(id);
        const sent = await send(first.url, token, {
          type: 'pageview',
          id,
          data: {
            visitor_fingerprint: `v${i}`,
            session_id: `s${wave}-${i}`,
            url: `https://shop.example/${wave}/${i}`,
          },
        });
        expect(sent.status).toBe(202);
      }
      await eventually(30_000, `wave ${wave} landing`, async () => (await counts(first)).rows === ids.length);
    }
    const warehouse = await publishedWarehouse(dataDir);
    try {
      // A background merge may join the waves' parts at any time; the parts it merged stay on disk as
      // outdated for a while, and the engine brings them back when the part covering them is found broken
      // (no loss then: this test failed so once). So the waves are merged into one part here, and the part
      // damaged below is the only copy of its rows once the outdated ones are removed.
      await warehouse.command(
        'ALTER TABLE events MODIFY SETTING old_parts_lifetime = 1, cleanup_delay_period = 1',
      );
      await warehouse.command('OPTIMIZE TABLE events FINAL');
      await eventually(60_000, 'no outdated part of events left', async () => {
        const [row] = await warehouse.query<{ n: number }>(
          "SELECT count() AS n FROM system.parts WHERE database = 'tally' AND table = 'events' AND NOT active",
        );
        return Number(row?.n) === 0;
      });
      const parts = await warehouse.query<{ name: string; rows: number }>(
        "SELECT name, rows FROM system.parts WHERE database = 'tally' AND table = 'events' AND active ORDER BY name",
      );
      part = parts[0] as { name: string; rows: number };
      expect(part.rows).toBeGreaterThan(0);
    } finally {
      await warehouse.close();
    }
    expect((await readiness(first)).status).toBe(200);
  } finally {
    expect(await first.stop('SIGTERM')).toBe(0);
  }

  // Cut the part's data files short on disk, as a full disk or a bad sector leaves them.
  const partDir = join(dataDir, 'warehouse', 'data', 'tally', 'events', part.name);
  const dataFiles = readdirSync(partDir).filter((f) => f.endsWith('.bin'));
  expect(dataFiles.length).toBeGreaterThan(0);
  for (const file of dataFiles)
    truncateSync(join(partDir, file), Math.floor(statSync(join(partDir, file)).size / 2));

  const damaged = await startTallyProcess(env);
  try {
    const ready = await readiness(damaged);
    expect(ready.status).toBe(503);
    expect(ready.body.detail).toContain(
      `the warehouse lost records: the engine detached 1 damaged part(s) (events broken-on-start_${part.name})`,
    );
    expect(ready.body.detail).toContain('npx tally warehouse reland');
    expect(damaged.output()).toContain('the warehouse lost records');
    const res = await fetch(`${damaged.endpoints.dashboardUrl}/api/v1/projects/${PROJECT}/health`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(res.status).toBe(200);
    const health = (await res.json()) as { lost_records: { parts: unknown[]; action: string } | null };
    expect(health.lost_records?.parts).toEqual([
      { table: 'events', part: `broken-on-start_${part.name}`, reason: 'broken-on-start' },
    ]);
    expect(health.lost_records?.action).toContain('npx tally warehouse reland');
    const lost = await counts(damaged);
    expect(lost.rows).toBe(ids.length - part.rows);
    expect(lost.record_ids).toBe(ids.length); // the ids stayed: a plain redelivery would land nothing
  } finally {
    expect(await damaged.stop('SIGTERM')).toBe(0);
  }

  const out = JSON.parse(
    await tally(['warehouse', 'reland', '--json'], pipelineEnv({ TALLY_DATA_DIR: dataDir })),
  );
  expect(out.parts).toEqual([
    { table: 'events', part: `broken-on-start_${part.name}`, reason: 'broken-on-start' },
  ]);
  expect(out.removed).toBe(part.rows);
  expect(out.restored).toBe(0);
  expect(out.rewound).toContainEqual({ group: 'analytics', topic: 'pageview', from: 0 });

  const mended = await startTallyProcess(env);
  try {
    await eventually(
      60_000,
      'the lost records landing again',
      async () => (await counts(mended)).rows === ids.length,
    );
    // The group has caught up with the log, so nothing more will come: each record once, no copy.
    await eventually(30_000, 'the analytics group catching up', async () => {
      const groups = JSON.parse(
        await tally(['log', 'groups', '--json'], pipelineEnv({ TALLY_DATA_DIR: dataDir })),
      );
      return groups.some(
        (g: { group: string; topic: string; lag: number }) =>
          g.group === 'analytics' && g.topic === 'pageview' && g.lag === 0,
      );
    });
    expect(await counts(mended)).toEqual({
      rows: ids.length,
      distinct_ids: ids.length,
      record_ids: ids.length,
    });
    const warehouse = await publishedWarehouse(dataDir);
    try {
      const landed = await warehouse.query<{ id: string }>(
        'SELECT id FROM events WHERE project_id = {p:String}',
        {
          p: PROJECT,
        },
      );
      expect(landed.map((r) => r.id).sort()).toEqual([...ids].sort());
    } finally {
      await warehouse.close();
    }
    expect((await readiness(mended)).status).toBe(200);
  } finally {
    expect(await mended.stop('SIGTERM')).toBe(0);
  }
});
