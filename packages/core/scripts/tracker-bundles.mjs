// Builds the tracker's script-tag bundles with esbuild: `tally.js` (the base script, src/script.ts) and
// `tally.full.js` (the base plus the optional features, src/script-full.ts), each minified with a source
// map, into packages/core/dist/tracker/, which the gateway serves (GET /tally.js). Run by `npm run build`
// and, as `npm start`'s first step (`--if-stale`), only when the bundles are missing or older than the
// tracker's sources. The bundle-size test and the browser tests build the same bytes through
// buildTrackerBundle. Plain JavaScript, so that it runs before anything is compiled and without tsx.
//
// Each file is written under a name with its content's hash (tally.<hash>.js, served as immutable) and
// listed in manifest.json, written last: a manifest always names complete files.
// @ts-check
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CORE_ROOT = fileURLToPath(new URL('../', import.meta.url));
export const TRACKER_DIST = join(CORE_ROOT, 'dist', 'tracker');

/** The bundles: the name they are served under and their entry module. */
export const TRACKER_BUNDLES = /** @type {const} */ ([
  { name: 'tally', entry: 'src/script.ts' },
  { name: 'tally.full', entry: 'src/script-full.ts' },
]);

/**
 * @typedef {{ name: string, hash: string, file: string, map: string }} ManifestEntry
 * @typedef {{ bundles: ManifestEntry[] }} TrackerManifest
 */

/**
 * One bundle, minified, and its source map (sources relative to packages/core).
 * @param {string} entry path relative to packages/core, e.g. 'src/script.ts'
 * @returns {Promise<{ code: string, map: string, hash: string }>}
 */
export async function buildTrackerBundle(entry) {
  /** @type {typeof import('esbuild')} */
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    throw new Error(
      'esbuild is not installed (a dev dependency): run `npm install`, then `npm run build`, or ship dist/ built',
    );
  }
  const result = await esbuild.build({
    entryPoints: [join(CORE_ROOT, entry)],
    absWorkingDir: CORE_ROOT,
    bundle: true,
    minify: true,
    format: 'iife',
    // Browsers of the last few years: optional chaining and ?? stay as they are (smaller).
    target: ['es2020'],
    platform: 'browser',
    write: false,
    outfile: join(CORE_ROOT, 'dist', 'tracker', 'bundle.js'),
    // The map is announced by the gateway's SourceMap header rather than a comment, which would cost
    // bytes of the 2 KB budget in every page load.
    sourcemap: 'external',
    legalComments: 'none',
    // The workspace packages' TypeScript sources, not their compiled dist/ (see docs/design/build-and-release.md).
    conditions: ['@tally/source'],
  });
  const code = result.outputFiles.find((file) => file.path.endsWith('.js'))?.text;
  const mapText = result.outputFiles.find((file) => file.path.endsWith('.map'))?.text;
  if (code === undefined || mapText === undefined) throw new Error('esbuild produced no output');
  // Sources named by package rather than by their path from dist/tracker/ (`../../src/…`, and
  // `../../../backoff/src/…` for @tally/backoff), which resolves to nothing useful next to the served map;
  // their text is in sourcesContent.
  const parsed = JSON.parse(mapText);
  const packages = join(CORE_ROOT, '..');
  parsed.sources = parsed.sources.map((/** @type {string} */ source) =>
    relative(packages, join(TRACKER_DIST, source)).replace(/^(\.\.\/)*/, '@tally/'),
  );
  const map = JSON.stringify(parsed);
  return { code, map, hash: createHash('sha256').update(code).digest('hex').slice(0, 12) };
}

/**
 * Builds every bundle into `outDir` and writes its manifest last.
 * @param {string} [outDir]
 * @returns {Promise<TrackerManifest>}
 */
export async function writeTrackerBundles(outDir = TRACKER_DIST) {
  mkdirSync(outDir, { recursive: true });
  /** @type {ManifestEntry[]} */
  const bundles = [];
  for (const { name, entry } of TRACKER_BUNDLES) {
    const { code, map, hash } = await buildTrackerBundle(entry);
    const file = `${name}.${hash}.js`;
    writeFileSync(join(outDir, file), code);
    writeFileSync(join(outDir, `${file}.map`), map);
    bundles.push({ name, hash, file, map: `${file}.map` });
  }
  /** @type {TrackerManifest} */
  const manifest = { bundles };
  writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // Earlier builds' files: no manifest names them any more.
  const current = new Set(['manifest.json', ...bundles.flatMap((b) => [b.file, b.map])]);
  for (const file of readdirSync(outDir)) if (!current.has(file)) rmSync(join(outDir, file), { force: true });
  return manifest;
}

/**
 * Why the bundles in `outDir` are out of date, or null when the manifest is newer than every source of the
 * tracker (packages/core/src and packages/backoff/src, tests aside) and this script.
 * @param {string} [outDir]
 * @returns {string | null}
 */
export function trackerStaleness(outDir = TRACKER_DIST) {
  const stamp = join(outDir, 'manifest.json');
  if (!existsSync(stamp)) return 'the tracker has not been bundled';
  const builtAt = statSync(stamp).mtimeMs;
  // The tracker's sources and those of the package it bundles besides (@tally/backoff).
  const inputs = [join(CORE_ROOT, 'src'), join(CORE_ROOT, '..', 'backoff', 'src')].flatMap((src) =>
    readdirSync(src)
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .map((file) => join(src, file)),
  );
  for (const input of [...inputs, fileURLToPath(import.meta.url)]) {
    if (statSync(input).mtimeMs > builtAt) return `${input} changed since the last build`;
  }
  return null;
}

/**
 * Builds when the bundles are missing or stale; says why on `log`. Returns whether it built.
 * @param {(line: string) => void} [log]
 * @param {string} [outDir]
 */
export async function buildTrackerIfStale(log = (line) => console.error(line), outDir = TRACKER_DIST) {
  const reason = trackerStaleness(outDir);
  if (!reason) return false;
  log(`Bundling the tracker (${reason})`);
  await writeTrackerBundles(outDir);
  return true;
}

/**
 * The manifest in `outDir`, or null when nothing was built there.
 * @param {string} [outDir]
 * @returns {TrackerManifest | null}
 */
export function readTrackerManifest(outDir = TRACKER_DIST) {
  const path = join(outDir, 'manifest.json');
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv.includes('--if-stale')) await buildTrackerIfStale();
    else {
      const manifest = await writeTrackerBundles();
      const { gzipSync } = await import('node:zlib');
      for (const bundle of manifest.bundles) {
        const code = readFileSync(join(TRACKER_DIST, bundle.file));
        console.error(
          `${bundle.name}.js: ${code.length} bytes minified, ${gzipSync(code, { level: 9 }).length} gzipped`,
        );
      }
    }
  } catch (error) {
    console.error(`build:tracker: ${/** @type {Error} */ (error).message}`);
    process.exit(1);
  }
}
