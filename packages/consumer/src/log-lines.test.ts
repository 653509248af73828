// Nothing of a record's values in any log line, on every failure path the consumers log: each path below
// is made to happen for real (chDB, the embedded log), with a marker in every value of every record, and
// the log lines are captured and checked: each path did log, and no line holds the marker. (The gateway's
// paths: services/gateway/src/log-lines.test.ts.)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { IngestRecord } from '@tally/contract';
import { openEmbeddedLog } from '@tally/log';
import { anEvent } from '@tally/log/testing';
import { migrate, openChdbWarehouse, type Warehouse, WarehouseUnavailableError } from '@tally/warehouse';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { consumeInBatches, type Lander } from './batch-loop.ts';
import { RecordError } from './failures.ts';

const MARKER = 'PAYLOAD-MARKER-c41d';
const dir = mkdtempSync(join(tmpdir(), 'tally-log-lines-'));
let warehouse: Warehouse;
const lines: string[] = [];
const logger = pino(
  { level: 'trace' },
  new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  }),
);

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  await warehouse.command('CREATE TABLE guarded (id String, value String) ENGINE = MergeTree ORDER BY id');
  await warehouse.command(`ALTER TABLE guarded ADD CONSTRAINT no_marker CHECK value NOT LIKE '%bad%'`);
});
afterAll(async () => {
  await warehouse.close();
  rmSync(dir, { recursive: true, force: true });
});

const record = (value: string) =>
  anEvent({
    project_id: `project-${MARKER}`,
    user_agent: `agent-${MARKER}`,
    data: { session_id: `s-${MARKER}`, event_name: value, event_data: { secret: MARKER } },
  });

/** Lands the records' `value` into `guarded`, where the warehouse refuses values with "bad" in them. */
function guardedLander(fail?: () => Error | null): Lander<{ id: string; value: string }> {
  return {
    prepare: ({ record }) => {
      const value = (record.data as { event_name: string }).event_name;
      if (value.includes('contract')) throw new RecordError('contract', `data.event_name is ${value}`);
      if (value.includes('throws')) throw new TypeError(`cannot read ${value}`);
      return { id: record.id, value };
    },
    land: async (items) => {
      const error = fail?.();
      if (error) throw error;
      await warehouse.insert(
        'guarded',
        items.map((i) => i.row),
      );
    },
  };
}

/** Runs the batch loop over `records` in a log of their own until `until` holds, then stops it. */
async function runLoop(
  records: IngestRecord[],
  lander: Lander<{ id: string; value: string }>,
  until: () => Promise<boolean>,
) {
  const log = openEmbeddedLog({ path: mkdtempSync(join(dir, 'log-')) });
  await log.append(records);
  const loop = consumeInBatches({
    group: 'g',
    maxRecords: 100,
    maxWaitMs: 20,
    maxRetryDelayMs: 20,
    consumer: log.consumer({ group: 'g' }),
    deadLetters: log.deadLetters,
    lander,
    logger,
  });
  try {
    await vi.waitFor(async () => expect(await until()).toBe(true), { timeout: 20_000, interval: 50 });
  } finally {
    await loop.stop();
    await log.close();
  }
}

const countOf = async (value: string) =>
  (
    await warehouse.query<{ n: number }>('SELECT count() AS n FROM guarded WHERE value = {v:String}', {
      v: value,
    })
  )[0]?.n ?? 0;
const logged = (text: string) => lines.some((line) => line.includes(text));

it('logs where and why, never what, on every failure path of the consumers', async () => {
  // Records refused by the warehouse (split down to them), refused by the contract, and thrown on.
  const records = ['ok 1', `bad ${MARKER}`, 'ok 2', `contract ${MARKER}`, `throws ${MARKER}`, 'ok 3'].map(
    record,
  );
  await runLoop(records, guardedLander(), async () => {
    const [row] = await warehouse.query<{ n: number }>(
      "SELECT count() AS n FROM guarded WHERE value LIKE 'ok%'",
    );
    return row?.n === 3;
  });
  // An outage (retried).
  let outages = 2;
  await runLoop(
    [record('ok 4')],
    guardedLander(() =>
      outages-- > 0 ? new WarehouseUnavailableError('connect ECONNREFUSED 127.0.0.1:8123') : null,
    ),
    async () => (await countOf('ok 4')) === 1,
  );
  // A failure of the warehouse itself (a missing table): retried until it is mended.
  await warehouse.command('RENAME TABLE guarded TO guarded_away');
  await runLoop([record('ok 5')], guardedLander(), async () => {
    if (logged('refused by the warehouse') && !logged('"mended":true')) {
      await warehouse.command('RENAME TABLE guarded_away TO guarded');
      logger.info({ mended: true }, 'table back');
    }
    return logged('"mended":true') && (await countOf('ok 5')) === 1;
  });

  const text = lines.join('');
  for (const expected of [
    'record set aside as undeliverable',
    'g batch failed; retrying',
    'g batch refused by the warehouse; retrying until it is mended',
  ]) {
    expect(text, expected).toContain(expected);
  }
  expect(text).toContain('"code":"warehouse-469"');
  expect(text).toContain('"code":"contract"');
  expect(text).toContain('"code":"error-TypeError"');
  expect(text).toContain('"code":60');
  expect(text).not.toContain(MARKER);
  expect(text).not.toContain('bad ');
});
