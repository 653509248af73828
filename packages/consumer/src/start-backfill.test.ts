// backfillAtStart: one fill at a time, started at once; a failed fill is tried again by the next batch.
// landingAfter: a lander whose batches wait for the fill, and get everything the batch loop passes.
import { aPageview, aPolledMessage } from '@tally/log/testing';
import { describe, expect, it } from 'vitest';
import type { Holding, Prepared } from './batch-loop.ts';
import { backfillAtStart, landingAfter } from './start-backfill.ts';

const logger = () => {
  const lines: string[] = [];
  return {
    lines,
    info: (_: object, m: string) => lines.push(m),
    warn: (_: object, m: string) => lines.push(m),
    error: (_: object, m: string) => lines.push(m),
  };
};

describe('backfillAtStart', () => {
  it('starts the fill once, and every batch waits for that one', async () => {
    let calls = 0;
    const log = logger();
    const backfill = backfillAtStart('visits', async () => ++calls && 3, log);
    await Promise.all([backfill.ready(), backfill.ready()]);
    await backfill.ready();
    expect(calls).toBe(1);
    expect(log.lines).toEqual(['visits backfilled']);
  });

  it('tries again with the next batch after a failure, and the batch waits for the new attempt', async () => {
    let calls = 0;
    const log = logger();
    const backfill = backfillAtStart(
      'MRR movements',
      async () => {
        calls++;
        if (calls === 1) throw new Error('warehouse away');
        return 0;
      },
      log,
    );
    await backfill.settled();
    expect(log.lines).toEqual(['MRR movements backfill failed; retrying with the first batch']);
    await backfill.ready();
    expect(calls).toBe(2);
    await backfill.ready();
    expect(calls).toBe(2);
  });
});

describe('landingAfter', () => {
  it('lands once the fill is done, with the batch loop’s holding passed on', async () => {
    let fill = (_rows: number) => {};
    const backfill = backfillAtStart(
      'visits',
      () =>
        new Promise<number>((resolve) => {
          fill = resolve;
        }),
    );
    const landed: { items: readonly Prepared<string>[]; holding: Holding | undefined }[] = [];
    const lander = landingAfter<string>(backfill, {
      prepare: (message) => message.record.id,
      land: async (items, holding) => void landed.push({ items, holding }),
    });
    const message = aPolledMessage(aPageview());
    const items = [{ message, row: lander.prepare(message) }];
    const holding: Holding = { assert: () => {}, id: 7 };
    const landing = lander.land(items, holding);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(landed).toEqual([]);
    fill(0);
    await landing;
    expect(landed).toEqual([{ items, holding }]);
    expect(items[0]?.row).toBe(message.record.id);
  });
});
