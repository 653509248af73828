// The admin server, on its own port (localhost by default, never the public one): liveness, readiness
// that reflects the record log's health, and Prometheus metrics.

import type { RecordLog } from '@tally/log';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { GatewayMetrics } from './metrics.ts';

export function buildAdmin(options: {
  log: RecordLog;
  metrics: GatewayMetrics;
  logger?: FastifyBaseLogger;
}): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const health = await options.log.health().catch(() => ({ ok: false, detail: 'health check failed' }));
    if (health.ok) return { status: 'ready' };
    return reply.code(503).send({ status: 'unavailable', detail: health.detail ?? 'record log unhealthy' });
  });
  app.get('/metrics', async (_request, reply) => {
    reply.type(options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
  return app;
}
