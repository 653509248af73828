// consumeInBatches on the real embedded record log: batches bounded by size (and by time, so a partial
// batch lands without waiting for more), offsets committed only after landing, retryable failures
// retried with the same batch, other failures left uncommitted for redelivery.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestRecord } from '@tally/contract';
import { type LogMessage, openEmbeddedLog, type RecordLog } from '@tally/log';
import { afterEach, expect, it } from 'vitest';
import { WarehouseError, WarehouseUnavailableError } from './errors.ts';
import { consumeInBatches } from './landing.ts';

function testRecord(type: 'pageview' | 'event' | 'revenue'): IngestRecord {
  const data = {
    pageview: { session_id: 's', visitor_fingerprint: 'v' },
    event: { session_id: 's', visitor_fingerprint: 'v', event_name: 'e' },
    revenue: {
      session_id: 's',
      visitor_fingerprint: 'v',
      customer_id: 'c',
      amount: 1,
      transaction_id: randomUUID(),
    },
  }[type];
  const now = Date.now();
  return {
    id: randomUUID(),
    type,
    project_id: 'landing',
    received_at: now,
    timestamp: now,
    client_timestamp: null,
    timestamp_clamped: false,
    user_agent: null,
    visitor_fingerprint_derived: false,
    data,
  } as IngestRecord;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function tempLog(): RecordLog {
  const path = mkdtempSync(join(tmpdir(), 'tally-landing-'));
  const log = openEmbeddedLog({ path });
  cleanups.push(async () => {
    await log.close();
    rmSync(path, { recursive: true, force: true });
  });
  return log;
}

/** Resolves once `count` records have been landed. */
function landedCount(landed: LogMessage[][], count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const check = () => {
      if (landed.flat().length >= count) resolve();
      else if (Date.now() > deadline) reject(new Error(`only ${landed.flat().length} of ${count} landed`));
      else setTimeout(check, 10);
    };
    check();
  });
}

it('lands batches of at most maxRecords and commits them', async () => {
  const log = tempLog();
  await log.append(Array.from({ length: 25 }, () => testRecord('pageview')));
  const landed: LogMessage[][] = [];
  const loop = consumeInBatches({
    consumer: log.consumer({ group: 'g' }),
    maxRecords: 10,
    maxWaitMs: 50,
    land: async (batch) => void landed.push([...batch]),
  });
  await landedCount(landed, 25);
  await loop.stop();
  expect(landed.map((b) => b.length)).toEqual([10, 10, 5]);
  expect(await log.consumer({ group: 'g' }).poll({ max: 100 })).toEqual([]);
});

it('retries a retryable failure with the same batch, then commits', async () => {
  const log = tempLog();
  await log.append([testRecord('revenue'), testRecord('revenue')]);
  const attempts: string[][] = [];
  const landed: LogMessage[][] = [];
  const loop = consumeInBatches({
    consumer: log.consumer({ group: 'g', topics: ['revenue'] }),
    maxRecords: 10,
    maxWaitMs: 20,
    maxRetryDelayMs: 20,
    land: async (batch) => {
      attempts.push(batch.map((m) => m.record.id));
      if (attempts.length < 3) throw new WarehouseUnavailableError('connection refused');
      landed.push([...batch]);
    },
  });
  await landedCount(landed, 2);
  await loop.stop();
  expect(attempts).toHaveLength(3);
  expect(attempts[1]).toEqual(attempts[0]);
  expect(attempts[2]).toEqual(attempts[0]);
  expect(await log.consumer({ group: 'g', topics: ['revenue'] }).poll({ max: 10 })).toEqual([]);
});

it('stops on a failure it cannot retry, leaving the batch uncommitted for redelivery', async () => {
  const log = tempLog();
  const records = [testRecord('event'), testRecord('event')];
  await log.append(records);
  const loop = consumeInBatches({
    consumer: log.consumer({ group: 'g' }),
    maxRecords: 10,
    maxWaitMs: 20,
    land: async () => {
      throw new WarehouseError('Code: 62. Syntax error', { code: 62 });
    },
  });
  await expect(loop.done).rejects.toMatchObject({ code: 62, retryable: false });
  const again = await log.consumer({ group: 'g' }).poll({ max: 10 });
  expect(again.map((m) => m.record.id)).toEqual(records.map((r) => r.id));
});
