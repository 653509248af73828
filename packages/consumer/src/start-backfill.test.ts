// backfillAtStart: one fill at a time, started at once; a failed fill is tried again by the next batch.
import { describe, expect, it } from 'vitest';
import { backfillAtStart } from './start-backfill.ts';

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
