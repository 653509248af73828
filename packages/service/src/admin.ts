// The admin server of a Tally process, on its own port (localhost by default, never the public one):
// liveness, readiness as the process's parts report it, and Prometheus metrics. The gateway, the
// consumer processes and the all-in-one process of npm start each serve one.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** A registry's metrics as `registry.getMetricsAsJSON()` gives them (sent between threads as is). */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export interface Health {
  ok: boolean;
  detail?: string;
}

export interface AdminOptions {
  /** Whether the process can do its work now (the record log is healthy, …). */
  health(): Promise<Health>;
  /** Every metric of the process, in Prometheus's text format. */
  metrics(): Promise<string>;
  logger?: FastifyBaseLogger | undefined;
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function buildAdmin(options: AdminOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const health = await options.health().catch(() => ({ ok: false, detail: 'health check failed' }));
    if (health.ok) return { status: 'ready' };
    return reply.code(503).send({ status: 'unavailable', detail: health.detail ?? 'not ready' });
  });
  app.get('/metrics', async (_request, reply) => {
    reply.type(METRICS_CONTENT_TYPE);
    return options.metrics();
  });
  return app;
}

/** The first unhealthy part's health, or ok when every part is. */
export async function allHealthy(parts: ReadonlyArray<() => Promise<Health>>): Promise<Health> {
  for (const part of parts) {
    const health = await part();
    if (!health.ok) return health;
  }
  return { ok: true };
}

/**
 * The metrics of several registries as one text: the registries of this thread, and those other threads
 * sent as JSON (`registry.getMetricsAsJSON()`); counters of the same name and labels are added up.
 */
export async function mergedMetrics(
  registries: readonly Registry[],
  fromElsewhere: readonly MetricsJson[] = [],
): Promise<string> {
  const local = await Promise.all(registries.map((r) => r.getMetricsAsJSON()));
  return AggregatorRegistry.aggregate([...local, ...fromElsewhere]).metrics();
}
