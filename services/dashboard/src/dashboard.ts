// buildDashboard: the dashboard's Fastify app (not listening): cookies, the attempt rate limit, the Origin
// check of state-changing requests, the read API (routes/*), the web app (web.ts), and errors mapped in
// one place (errors.ts). runtime.ts gives it its dependencies and listens; tests call it with their own.
// Design notes: docs/design/dashboard-service.md.
import fastifyCookie from '@fastify/cookie';
import fastifyRateLimit from '@fastify/rate-limit';
import { trustedProxies } from '@tally/config';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Redis } from 'ioredis';
import { BODY_LIMIT_BYTES } from './api/operations.ts';
import { COMPONENTS } from './api/schemas.ts';
import type { DashboardDeps } from './deps.ts';
import { dashboardError, toDashboardError } from './errors.ts';
import { alertRoutes } from './routes/alert-routes.ts';
import { healthRoutes } from './routes/health-routes.ts';
import { invitationRoutes } from './routes/invitation-routes.ts';
import { memberRoutes } from './routes/member-routes.ts';
import { projectRoutes } from './routes/project-routes.ts';
import { reportSubscriptionRoutes } from './routes/report-subscription-routes.ts';
import { revenueDailyRoutes } from './routes/revenue-daily-routes.ts';
import { revenueRoutes } from './routes/revenue-routes.ts';
import { sessionRoutes } from './routes/session-routes.ts';
import { shareRoutes } from './routes/share-routes.ts';
import { trafficRoutes } from './routes/traffic-routes.ts';
import { dashboardUrl, webRoutes } from './web.ts';

/** The methods that change nothing; every other method is checked, whatever its path. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A state-changing request must come from the dashboard itself: its Origin (which browsers send on every
 * cross-origin and same-origin POST, PATCH and DELETE) must be the dashboard's, and Sec-Fetch-Site, when
 * sent, same-origin. A request without either comes from no browser (curl, a script with a read key): no
 * cross-site forgery is possible there.
 */
export function isSameOrigin(request: FastifyRequest, own: string): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) return origin === own || origin === `${request.protocol}://${request.host}`;
  const site = request.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

export async function buildDashboard(
  deps: DashboardDeps,
  options: { logger?: FastifyBaseLogger; redis?: Redis | null } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : {}),
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustedProxies(deps.config),
    bodyLimit: BODY_LIMIT_BYTES,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, allErrors: false } },
  });
  for (const schema of COMPONENTS) app.addSchema(schema);
  await app.register(fastifyCookie);
  await app.register(fastifyRateLimit, {
    global: false,
    ...(options.redis
      ? { redis: options.redis, nameSpace: `${deps.config.REDIS_KEY_PREFIX}dashboard-attempts:` }
      : {}),
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      dashboardError('too_many_attempts', undefined, { retryAfterSeconds: Math.ceil(context.ttl / 1000) }),
  });

  // Decided by the method alone, before routing: the router decodes the path (`/%61pi/…` is `/api/…`),
  // so no test of the raw path can tell which requests reach an operation.
  app.addHook('onRequest', async (request) => {
    if (SAFE_METHODS.has(request.method.toUpperCase())) return;
    if (!isSameOrigin(request, new URL(dashboardUrl(deps.config, request)).origin))
      throw dashboardError('cross_site');
  });

  app.setErrorHandler((error, request, reply) => {
    const mapped = toDashboardError(error);
    if (mapped.statusCode >= 500)
      request.log.error({ err: error, route: request.routeOptions.url }, `answered ${mapped.statusCode}`);
    if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', String(mapped.retryAfterSeconds));
    return reply
      .code(mapped.statusCode)
      .headers(mapped.headers())
      .type('application/json; charset=utf-8')
      .send(mapped.body());
  });
  // A path no route takes: answered through the same mapping.
  app.setNotFoundHandler(async () => {
    throw dashboardError('not_found');
  });

  sessionRoutes(app, deps);
  projectRoutes(app, deps);
  memberRoutes(app, deps);
  invitationRoutes(app, deps);
  reportSubscriptionRoutes(app, deps);
  trafficRoutes(app, deps);
  shareRoutes(app, deps);
  revenueRoutes(app, deps);
  revenueDailyRoutes(app, deps);
  healthRoutes(app, deps);
  alertRoutes(app, deps);
  await webRoutes(app, deps);
  return app;
}
