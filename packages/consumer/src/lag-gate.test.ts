// LagGate's decisions, on lags given by hand: closed at the bound, by the group furthest behind; open
// again only under 90% of it (no flapping at the bound); open once stopped. The whole path, with npm start's
// gateway and a warehouse that refuses, is test/consumer-lag-gate.test.ts.
import { expect, it } from 'vitest';
import { LagGate } from './lag-gate.ts';
import type { GroupProgressState } from './progress.ts';

function gateOver(lags: Record<string, number>) {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const state = (group: string, lag: number): GroupProgressState => ({
    group,
    lag,
    last_progress_at: 0,
    stalled_since: null,
    reason: null,
  });
  const progress = {
    polls: 0,
    async poll() {
      progress.polls += 1;
    },
    states: () => Object.entries(lags).map(([group, lag]) => state(group, lag)),
  };
  const gate = new LagGate({ progress, maxLag: 100, flag });
  return { gate, flag, progress };
}

it('closes at the bound, by the group furthest behind, and opens under 90% of it', async () => {
  const lags = { analytics: 10, revenue: 0 };
  const { gate, flag, progress } = gateOver(lags);
  await gate.check();
  expect(progress.polls).toBe(1); // it reads the lag afresh
  expect(gate.closed).toBe(false);
  lags.revenue = 100;
  await gate.check();
  expect(gate.closed).toBe(true);
  expect(Atomics.load(flag, 0)).toBe(1);
  lags.revenue = 95; // under the bound, not under 90% of it
  await gate.check();
  expect(gate.closed).toBe(true);
  lags.revenue = 89;
  await gate.check();
  expect(gate.closed).toBe(false);
  expect(Atomics.load(flag, 0)).toBe(0);
  lags.analytics = 99;
  await gate.check();
  expect(gate.closed).toBe(false);
});

it('opens when stopped, and refuses a bound of 0', async () => {
  const { gate } = gateOver({ analytics: 1000 });
  await gate.check();
  expect(gate.closed).toBe(true);
  await gate.stop();
  expect(gate.closed).toBe(false);
  expect(() => new LagGate({ progress: gateOver({}).progress, maxLag: 0, flag: new Int32Array(1) })).toThrow(
    RangeError,
  );
});

it('says why ingestion is held back while it is: since when, by which group, its lag at the last read', async () => {
  const lags = { analytics: 10, revenue: 0 };
  const { gate } = gateOver(lags);
  await gate.check();
  expect(gate.hold()).toBeNull();
  const before = Date.now();
  lags.analytics = 150;
  await gate.check();
  const held = gate.hold();
  expect(held).toMatchObject({ group: 'analytics', lag: 150, max_lag: 100, reopens_below: 90 });
  expect(held?.since).toBeGreaterThanOrEqual(before);
  lags.analytics = 120;
  lags.revenue = 130;
  await gate.check();
  expect(gate.hold()).toEqual({ ...held, group: 'revenue', lag: 130 }); // since stays
  lags.analytics = 0;
  lags.revenue = 89;
  await gate.check();
  expect(gate.hold()).toBeNull();
  lags.revenue = 100;
  await gate.check();
  expect(gate.hold()).not.toBeNull();
  await gate.stop();
  expect(gate.hold()).toBeNull();
});
