// The web app's files (services/dashboard/web/dist, built by the web app's own build) and the headers that
// keep it safe: a Content-Security-Policy whose frame-ancestors is 'none' everywhere except a share link's
// page, where it lists the origins its owner allowed to embed it; hashed assets cached for a year, the
// HTML never. Until the web app is built, a placeholder page says so.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { TallyConfig } from '@tally/config';
import { isEmbedOrigin } from '@tally/state-store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DashboardDeps } from './deps.ts';

export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../web/dist/', import.meta.url));

const PLACEHOLDER = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tally</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>
<main><h1>Tally</h1><p>The dashboard's web app is not built yet. Its read API is served under
<code>/api/v1</code> (see <code>schemas/openapi-dashboard.yaml</code>).</p></main></body></html>`;

/** The dashboard's own address: DASHBOARD_PUBLIC_URL, else the request's scheme and host. */
export function dashboardUrl(config: TallyConfig, request: FastifyRequest): string {
  if (config.DASHBOARD_PUBLIC_URL) return config.DASHBOARD_PUBLIC_URL.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}`;
}

/**
 * The page's CSP; `embedOrigins` are the origins allowed to embed it (none: 'none'). Anything that is not
 * exactly an origin is left out, whatever the store holds (a link stored before origins were checked), so
 * nothing can end the frame-ancestors directive or add another.
 */
export function contentSecurityPolicy(embedOrigins: readonly string[]): string {
  const origins = embedOrigins.filter(isEmbedOrigin);
  const frameAncestors = origins.length ? origins.join(' ') : "'none'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

export async function webRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const root = deps.webRoot ?? DEFAULT_WEB_ROOT;
  const built = existsSync(join(root, 'index.html'));
  const index = () => (built ? readFileSync(join(root, 'index.html'), 'utf8') : PLACEHOLDER);

  const page = (reply: FastifyReply, embedOrigins: readonly string[] = []) => {
    const policy = contentSecurityPolicy(embedOrigins);
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', policy)
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff');
    // X-Frame-Options cannot list origins: only sent where no origin may embed the page.
    if (policy.endsWith("frame-ancestors 'none'")) reply.header('x-frame-options', 'DENY');
    return reply.send(index());
  };

  if (built) {
    await app.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      wildcard: true,
      // Vite names assets by their content's hash: a changed file is a new name.
      setHeaders: (reply) => {
        reply.header('cache-control', 'public, max-age=31536000, immutable');
      },
    });
  }
  // A share link's page: embeddable from its listed origins only (a revoked or unknown link: nowhere).
  app.get('/share/:token', async (request, reply) => {
    const share = await deps.shares.findByToken((request.params as { token: string }).token);
    return page(reply, share?.embed_origins ?? []);
  });
  // Every other page of the single-page app.
  app.get('/', async (_request, reply) => page(reply));
  app.get('/*', async (request, reply) => {
    if (request.url.startsWith('/api/')) return reply.callNotFound();
    return page(reply);
  });
}
