// GET /tally.js on the public port: the bundles @tally/core's build writes (built here, for real, into a
// temporary directory), their versioned names and source maps, ETag and 304, cache lifetimes, gzip, CORS;
// and every other path still 404.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTrackerBundles } from '../../../packages/core/scripts/tracker-bundles.mjs';
import { type TestGateway, testGateway } from './testing.ts';
import { TRACKER_MAX_AGE_S } from './tracker-script.ts';

let gw: TestGateway;
let dir: string;
let base: { hash: string; file: string; map: string };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tally-tracker-'));
  const manifest = await writeTrackerBundles(dir);
  base = manifest.bundles.find((b) => b.name === 'tally') as typeof base;
  gw = await testGateway({}, { trackerDir: dir });
}, 30_000);
afterAll(async () => {
  await gw?.close();
});

const get = (url: string, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'GET', url, headers });

describe('GET /tally.js', () => {
  it('serves the minified base bundle with a short cache lifetime, an ETag, CORS and its source map', async () => {
    const res = await get('/tally.js', { origin: 'https://shop.example' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.body).toBe(readFileSync(join(dir, base.file), 'utf8'));
    expect(res.body).toMatch(/^"use strict";\(\(\)=>\{/); // esbuild's minified IIFE
    expect(res.headers['cache-control']).toBe(`public, max-age=${TRACKER_MAX_AGE_S}`);
    expect(res.headers.etag).toBe(`"${base.hash}"`);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers.sourcemap).toBe(`/${base.map}`);

    const map = await get(String(res.headers.sourcemap));
    expect(map.statusCode).toBe(200);
    expect(map.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const sourceMap = map.json() as { version: number; sources: string[] };
    expect(sourceMap.version).toBe(3);
    expect(sourceMap.sources).toEqual(
      expect.arrayContaining(['@tally/core/src/script.ts', '@tally/core/src/tracker.ts']),
    );
  });

  it('answers 304 without a body to If-None-Match with its ETag (W/ or not, in a list, or *)', async () => {
    const { etag } = (await get('/tally.js')).headers;
    for (const ifNoneMatch of [String(etag), `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await get('/tally.js', { 'if-none-match': ifNoneMatch });
      expect(res.statusCode, ifNoneMatch).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['cache-control']).toBe(`public, max-age=${TRACKER_MAX_AGE_S}`);
    }
    expect((await get('/tally.js', { 'if-none-match': '"older"' })).statusCode).toBe(200);
  });

  it('is gzipped for clients that accept it, with an ETag of its own', async () => {
    const res = await gw.app.inject({
      method: 'GET',
      url: '/tally.js',
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toMatch(/Accept-Encoding/i);
    expect(res.headers.etag).toBe(`"${base.hash}.gz"`);
    expect(gunzipSync(res.rawPayload).toString()).toBe(readFileSync(join(dir, base.file), 'utf8'));
    expect(res.rawPayload.length).toBeLessThanOrEqual(2048);
    const refused = await get('/tally.js', { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect((await get('/tally.js', { 'if-none-match': `"${base.hash}.gz"` })).statusCode).toBe(304);
  });

  it('serves the same bytes under the versioned name as immutable', async () => {
    const res = await get(`/${base.file}`);
    expect(base.file).toBe(`tally.${base.hash}.js`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toBe((await get('/tally.js')).body);
    const head = await gw.app.inject({ method: 'HEAD', url: `/${base.file}` });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it('serves tally.full.js, the script with the optional features, the same way', async () => {
    const full = await get('/tally.full.js');
    expect(full.statusCode).toBe(200);
    expect(full.body.length).toBeGreaterThan((await get('/tally.js')).body.length);
    const hashed = String(full.headers.sourcemap).replace(/\.map$/, '');
    expect(hashed).toMatch(/^\/tally\.full\.[0-9a-f]{12}\.js$/);
    expect((await get(hashed)).headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('leaves every other path 404, and /api/ingest the only API route', async () => {
    for (const url of ['/tally.0123456789ab.js', '/tally.js.map', '/tally', '/js/tally.js', '/index.html']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ message: 'not found; the only endpoint is POST /api/ingest' });
    }
    expect((await gw.app.inject({ method: 'POST', url: '/tally.js', payload: {} })).statusCode).toBe(404);
    expect((await get('/api/ingest')).statusCode).toBe(405);
  });
});

it('answers 404 for /tally.js when the tracker has not been built', async () => {
  const unbuilt = await testGateway({}, { trackerDir: mkdtempSync(join(tmpdir(), 'tally-none-')) });
  try {
    expect((await unbuilt.app.inject({ method: 'GET', url: '/tally.js' })).statusCode).toBe(404);
  } finally {
    await unbuilt.close();
  }
});
