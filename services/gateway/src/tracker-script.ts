// The tracker as the gateway serves it on the public port: GET /tally.js (and /tally.full.js, the script
// with the optional features), the bundles @tally/core's build wrote to packages/core/dist/tracker/ (see
// packages/core/scripts/tracker-bundles.mjs). Each is also served under its content-hashed name
// (/tally.<hash>.js), cached for a year as immutable, beside its source map (/tally.<hash>.js.map, named by
// the SourceMap header); the plain name is cached briefly and revalidated by ETag, so a new release reaches
// every page within minutes. The files are read once, at start, and kept in memory with their gzip form.
// CORS comes from the gateway's own @fastify/cors (Access-Control-Allow-Origin: *, as for every response).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build` writes the bundles, from services/gateway/src or services/gateway/dist alike. */
export const DEFAULT_TRACKER_DIR = fileURLToPath(
  new URL('../../../packages/core/dist/tracker/', import.meta.url),
);

/** How long a browser may use /tally.js before asking again (with If-None-Match). */
export const TRACKER_MAX_AGE_S = 300;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const SHORT = `public, max-age=${TRACKER_MAX_AGE_S}`;

interface ServedFile {
  body: Buffer;
  gzip: Buffer;
  etag: string;
  contentType: string;
  /** The hashed map's path, for the SourceMap header of a script. */
  sourceMap?: string;
}

interface ManifestEntry {
  name: string;
  hash: string;
  file: string;
  map: string;
}

/** The routes to serve (path → file), or null when the tracker has not been built in `dir`. */
export function loadTrackerScripts(dir: string): Map<string, { file: ServedFile; cache: string }> | null {
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) return null;
  const { bundles } = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bundles: ManifestEntry[] };
  const routes = new Map<string, { file: ServedFile; cache: string }>();
  for (const bundle of bundles) {
    const script = served(
      readFileSync(join(dir, bundle.file)),
      bundle.hash,
      'text/javascript; charset=utf-8',
    );
    script.sourceMap = `/${bundle.map}`;
    const map = served(
      readFileSync(join(dir, bundle.map)),
      `${bundle.hash}-map`,
      'application/json; charset=utf-8',
    );
    routes.set(`/${bundle.name}.js`, { file: script, cache: SHORT });
    routes.set(`/${bundle.file}`, { file: script, cache: IMMUTABLE });
    routes.set(`/${bundle.map}`, { file: map, cache: IMMUTABLE });
  }
  return routes;
}

function served(body: Buffer, tag: string, contentType: string): ServedFile {
  return { body, gzip: gzipSync(body, { level: 9 }), etag: tag, contentType };
}

/**
 * Whether If-None-Match names this file (weak comparison, RFC 9110 13.1.2: either encoding's tag, W/ or
 * not, or `*`).
 */
function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === `"${etag}"` || tag === `"${etag}.gz"`;
  });
}

/** Whether Accept-Encoding admits gzip: named (or `*`) without `q=0`. */
export function acceptsGzip(request: FastifyRequest): boolean {
  const header = request.headers['accept-encoding'];
  if (!header) return false;
  return String(header)
    .split(',')
    .some((part) => {
      const [coding = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
      if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') return false;
      const q = params.find((param) => param.startsWith('q='));
      return !q || Number(q.slice(2)) > 0;
    });
}

/** Registers GET (and HEAD) for every file of the tracker found in `dir`; returns whether there was one. */
export function trackerScriptRoutes(app: FastifyInstance, dir: string): boolean {
  const routes = loadTrackerScripts(dir);
  if (!routes) return false;
  for (const [path, { file, cache }] of routes) {
    app.get(path, (request: FastifyRequest, reply: FastifyReply) => {
      const gzip = acceptsGzip(request);
      const etag = `"${file.etag}${gzip ? '.gz' : ''}"`;
      reply
        .header('cache-control', cache)
        .header('etag', etag)
        .header('vary', 'Accept-Encoding')
        // Pages that isolate themselves (Cross-Origin-Embedder-Policy) may still load the script.
        .header('cross-origin-resource-policy', 'cross-origin')
        .header('x-content-type-options', 'nosniff');
      if (file.sourceMap) reply.header('sourcemap', file.sourceMap);
      if (notModified(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
      reply.type(file.contentType);
      if (gzip) reply.header('content-encoding', 'gzip');
      return reply.send(gzip ? file.gzip : file.body);
    });
  }
  return true;
}
