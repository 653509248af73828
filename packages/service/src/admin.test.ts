// The admin server: readiness from the process's parts, and the metrics of several registries (one per
// thread) served as one text.
import { Counter, Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { allHealthy, buildAdmin, mergedMetrics } from './admin.ts';

it('reports ready while every part is healthy and 503 while one is not', async () => {
  let ok = true;
  const admin = buildAdmin({
    health: () =>
      allHealthy([
        async () => ({ ok: true }),
        async () => (ok ? { ok: true } : { ok: false, detail: 'the last produce request failed' }),
      ]),
    metrics: async () => '',
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
    health: async () => {
      throw new Error('boom');
    },
    metrics: async () => '',
  });
  expect((await admin.inject({ url: '/readyz' })).statusCode).toBe(503);
  await admin.close();
});

it('serves the metrics of this thread and of others as one text, adding up equal series', async () => {
  const here = new Registry();
  const there = new Registry();
  for (const [registry, n] of [
    [here, 2],
    [there, 3],
  ] as const) {
    const counter = new Counter({
      name: 'tally_test_total',
      help: 'test',
      labelNames: ['type'],
      registers: [registry],
    });
    counter.inc({ type: 'pageview' }, n);
  }
  new Counter({ name: 'tally_only_there_total', help: 'test', registers: [there] }).inc();
  const admin = buildAdmin({
    health: async () => ({ ok: true }),
    metrics: async () => mergedMetrics([here], [await there.getMetricsAsJSON()]),
  });
  const text = (await admin.inject({ url: '/metrics' })).body;
  expect(text).toContain('tally_test_total{type="pageview"} 5');
  expect(text).toContain('tally_only_there_total 1');
  await admin.close();
});
