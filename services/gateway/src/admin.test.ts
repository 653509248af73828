import type { RecordLog } from '@tally/log';
import { expect, it } from 'vitest';
import { buildAdmin } from './admin.ts';
import { GatewayMetrics } from './metrics.ts';

const logWithHealth = (health: RecordLog['health']): RecordLog => ({
  append: async () => {},
  consumer: () => {
    throw new Error('unused');
  },
  health,
  close: async () => {},
});

it('reports ready while the record log is healthy and 503 while it is not', async () => {
  let ok = true;
  const admin = buildAdmin({
    log: logWithHealth(async () =>
      ok ? { ok: true } : { ok: false, detail: 'the last produce request failed' },
    ),
    metrics: new GatewayMetrics(),
  });
  expect((await admin.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
  ok = false;
  const down = await admin.inject({ url: '/readyz' });
  expect(down.statusCode).toBe(503);
  expect(down.json()).toEqual({ status: 'unavailable', detail: 'the last produce request failed' });
  expect((await admin.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
  await admin.close();
});

it('answers 503 when the health check itself fails', async () => {
  const admin = buildAdmin({
    log: logWithHealth(async () => {
      throw new Error('boom');
    }),
    metrics: new GatewayMetrics(),
  });
  expect((await admin.inject({ url: '/readyz' })).statusCode).toBe(503);
  await admin.close();
});
