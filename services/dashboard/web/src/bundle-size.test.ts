// The web app's budget: at most 100 KB of JavaScript, minified and gzipped, for the first load (the entry
// script and the chunks it preloads; views loaded on demand are not part of it), checked on a real
// production build.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildWeb } from '../scripts/build.mjs';

const JS_BUDGET_BYTES = 100 * 1024;
const CSS_BUDGET_BYTES = 16 * 1024;

let outDir: string;
let html: string;
beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'tally-web-'));
  await buildWeb({ outDir });
  html = readFileSync(join(outDir, 'index.html'), 'utf8');
}, 120_000);
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const gzipped = (path: string) => gzipSync(readFileSync(join(outDir, path)), { level: 9 }).length;
const refs = (pattern: RegExp) => [...html.matchAll(pattern)].map((m) => m[1] as string);

it(`loads at most ${JS_BUDGET_BYTES / 1024} KB of JavaScript gzipped on the first page`, () => {
  const scripts = [
    ...refs(/<script type="module"[^>]*src="([^"]+)"/g),
    ...refs(/<link rel="modulepreload"[^>]*href="([^"]+)"/g),
  ];
  expect(scripts.length).toBeGreaterThan(0);
  const total = scripts.reduce((sum, src) => sum + gzipped(src), 0);
  expect(total, `first-load JavaScript is ${total} bytes gzipped`).toBeLessThanOrEqual(JS_BUDGET_BYTES);
});

it(`loads at most ${CSS_BUDGET_BYTES / 1024} KB of CSS gzipped`, () => {
  const sheets = refs(/<link rel="stylesheet"[^>]*href="([^"]+)"/g);
  const total = sheets.reduce((sum, href) => sum + gzipped(href), 0);
  expect(total, `CSS is ${total} bytes gzipped`).toBeLessThanOrEqual(CSS_BUDGET_BYTES);
});

it('puts every asset under /assets/ with a content hash, so it can be cached for good', () => {
  const assets = refs(/(?:src|href)="(\/assets\/[^"]+)"/g);
  expect(assets.length).toBeGreaterThan(0);
  for (const asset of assets) expect(asset).toMatch(/^\/assets\/[\w-]+-[\w-]{8}\.(js|css)$/);
});
