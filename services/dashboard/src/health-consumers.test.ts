// The health view's consumer groups: a dashboard of its own sees the log only, and shows a group stalled
// when its oldest record not landed has waited longer than CONSUMER_STALL_MS; beside the consumers (npm
// start) it shows what they tell of themselves, their reason included, and when its gateway holds ingestion
// back for them (LagGate). Real embedded log, real chDB.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './test-dashboard.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-health-consumers-'));
const log = openEmbeddedLog({ path: join(dir, 'log') });
afterAll(async () => {
  await log.close();
  rmSync(dir, { recursive: true, force: true });
});

const healthOf = async (dashboard: TestDashboard) => {
  const res = await dashboard.app.inject({
    url: '/api/v1/projects/p/health',
    headers: { authorization: `Bearer ${dashboard.key}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const health = async (dashboard: TestDashboard) => (await healthOf(dashboard)).consumers;

beforeAll(async () => {
  // Group "stuck" committed its first record, then records came 10 minutes ago and wait; group "live"
  // has one record that came now.
  const old = Date.now() - 600_000;
  await log.append([testRecord('event', { received_at: old - 1000 })]);
  const stuck = log.consumer({ group: 'stuck', topics: ['event'] });
  await stuck.commit(await stuck.poll({ max: 1, waitMs: 1000 }));
  await stuck.close();
  await log.append([testRecord('event', { received_at: old }), testRecord('event', { received_at: old })]);
  const live = log.consumer({ group: 'live', topics: ['identify'] });
  await log.append([testRecord('identify')]);
  const [first] = await live.poll({ max: 1, waitMs: 1000 });
  if (first) await live.commit([first]);
  await live.close();
  await log.append([testRecord('identify')]);
});

it('tells a stalled group from the log alone, in a dashboard of its own', async () => {
  const dashboard = await startTestDashboard('health-log-only', 'p', { log });
  try {
    expect(await health(dashboard)).toEqual([
      {
        group: 'live',
        lag: 1,
        status: 'ok',
        stalled_since: null,
        stalled_seconds: null,
        reason: null,
        source: 'log',
      },
      {
        group: 'stuck',
        lag: 2,
        status: 'stalled',
        stalled_since: expect.any(String),
        stalled_seconds: expect.any(Number),
        reason:
          "2 records waiting, the oldest for more than 120 s (CONSUMER_STALL_MS); the consumer's /readyz says why",
        source: 'log',
      },
    ]);
  } finally {
    await dashboard.close();
  }
});

it("shows the consumers' own account beside them, with their reason", async () => {
  // What npm start hands over: its ConsumerProgress (ConsumerStates, structurally).
  const since = Date.now() - 95_000;
  let state = {
    group: 'analytics',
    lag: 4,
    last_progress_at: since - 3_600_000,
    stalled_since: since as number | null,
    reason:
      '4 records waiting, no batch committed for 95 s; last failure: warehouse failure (WarehouseError HTTP 431)' as
        | string
        | null,
  };
  const dashboard = await startTestDashboard('health-consumers', 'p', {
    log,
    consumers: { states: () => [state] },
  });
  try {
    const [analytics] = await health(dashboard);
    expect(analytics).toEqual({
      group: 'analytics',
      lag: 4,
      status: 'stalled',
      stalled_since: new Date(since).toISOString(),
      stalled_seconds: expect.any(Number),
      reason: state.reason,
      source: 'consumers',
    });
    expect(analytics.stalled_seconds).toBeGreaterThanOrEqual(95);
    state = { ...state, lag: 0, last_progress_at: Date.now(), stalled_since: null, reason: null };
    expect((await health(dashboard))?.[0]).toMatchObject({
      status: 'ok',
      lag: 0,
      reason: null,
      stalled_seconds: null,
    });
  } finally {
    await dashboard.close();
  }
});

it("says while npm start's gateway holds ingestion back, and nothing when it does not", async () => {
  const since = Date.now() - 42_000;
  let hold: { since: number; group: string; lag: number; max_lag: number; reopens_below: number } | null = {
    since,
    group: 'analytics',
    lag: 120_000,
    max_lag: 100_000,
    reopens_below: 90_000,
  };
  const dashboard = await startTestDashboard('health-held-back', 'p', { log, ingestionHold: () => hold });
  try {
    const held = (await healthOf(dashboard)).ingestion_held_back;
    expect(held).toEqual({
      since: new Date(since).toISOString(),
      held_seconds: expect.any(Number),
      group: 'analytics',
      lag: 120_000,
      max_lag: 100_000,
      reopens_below: 90_000,
    });
    expect(held.held_seconds).toBeGreaterThanOrEqual(42);
    hold = null;
    expect((await healthOf(dashboard)).ingestion_held_back).toBeNull();
  } finally {
    await dashboard.close();
  }
  // A dashboard without such a gate (a gateway on its own never holds ingestion back for consumers).
  const alone = await startTestDashboard('health-no-gate', 'p', { log });
  try {
    expect((await healthOf(alone)).ingestion_held_back).toBeNull();
  } finally {
    await alone.close();
  }
});
