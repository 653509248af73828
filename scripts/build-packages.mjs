// Builds what the publishable packages (@tally/contract, @tally/core, @tally/react, @tally/revenue: every
// workspace package that is not `private`) ship besides the compiler's output: the CommonJS copy of each
// entry point whose `exports` has a `require` condition, for servers that still `require()` (Node 18 cannot
// load ES modules with `require`). Each package's `prepack` runs it, after `tsc -b` (scripts/build.mjs), so
// `npm pack` and `npm publish` always pack a fresh build. Plain JavaScript, like build.mjs.
//
// The ES modules are `tsc`'s dist/ as it is (JavaScript and declarations, one file per source). The
// CommonJS copy is esbuild's bundle of that output per entry point (dist/cjs/<entry>.js), other packages left
// as `require()`s, and dist/cjs holds a copy of the declarations beside a package.json saying
// `"type": "commonjs"`, so that TypeScript reads them as the CommonJS module they describe.
// Usage: node scripts/build-packages.mjs [package directory…]   (default: every publishable package)
// @ts-check
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, ROOT } from './build.mjs';

/** The oldest Node.js the CommonJS copies are for (the revenue SDK's `engines`, tested by the install test). */
export const CJS_TARGET = 'node18';

/**
 * @typedef {{ types?: string, default?: string }} Target
 * @typedef {Record<string, string | Target>} ExportEntry
 * @typedef {{ name: string, private?: boolean, exports?: Record<string, ExportEntry> }} Manifest
 */

/** @param {string} dir @returns {Manifest} */
const manifest = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

/**
 * The directories (relative to `root`) of the workspace packages that are published: those not `private`.
 * @param {string} root
 */
export function publishablePackages(root) {
  return readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, 'packages', entry.name, 'package.json')))
    .map((entry) => `packages/${entry.name}`)
    .filter((dir) => !manifest(join(root, dir)).private)
    .sort();
}

/**
 * The entry points of a package that have a CommonJS copy: the ES module `tsc` wrote and the CommonJS file.
 * @param {Manifest} pkg
 * @returns {Array<{ esm: string, cjs: string }>}
 */
export function commonJsEntries(pkg) {
  return Object.entries(pkg.exports ?? {}).flatMap(([path, entry]) => {
    const esm = typeof entry.import === 'object' ? entry.import.default : undefined;
    const cjs = typeof entry.require === 'object' ? entry.require.default : undefined;
    if (!cjs) return [];
    if (!esm) throw new Error(`${pkg.name} ${path}: a require condition needs an import condition to copy`);
    return [{ esm, cjs }];
  });
}

/** @param {string} dir @returns {string[]} the .d.ts files under dir/dist, outside dist/cjs, relative to dist */
function declarations(dir) {
  return readdirSync(join(dir, 'dist'), { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.d.ts') && !file.startsWith('cjs/'),
  );
}

/**
 * Writes `dir`/dist/cjs (nothing when the package has no `require` condition). Expects `tsc`'s output.
 * @param {string} dir absolute directory of the package
 */
export async function buildCommonJs(dir) {
  const pkg = manifest(dir);
  const entries = commonJsEntries(pkg);
  const out = join(dir, 'dist', 'cjs');
  // Up to date: nothing is rewritten, so a pack while another process reads dist/ (the tests) changes nothing.
  if (commonJsUpToDate(dir, out)) return;
  rmSync(out, { recursive: true, force: true });
  if (entries.length === 0) return;
  for (const { esm } of entries) {
    if (!existsSync(join(dir, esm))) throw new Error(`${pkg.name}: ${esm} is missing; run npm run build`);
  }
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: dir,
    entryPoints: Object.fromEntries(
      entries.map(({ esm, cjs }) => [relative('dist/cjs', cjs).replace(/\.js$/, ''), esm]),
    ),
    outdir: out,
    bundle: true,
    // Other packages (@tally/contract, ajv…) stay require()s: they are dependencies, installed beside it.
    packages: 'external',
    format: 'cjs',
    platform: 'node',
    target: CJS_TARGET,
    // esbuild follows tsc's source maps (sources inlined), so these map to the TypeScript sources too.
    sourcemap: true,
    logLevel: 'silent',
  });
  if (result.warnings.length > 0)
    throw new Error(`${pkg.name}: esbuild warned: ${result.warnings.map((w) => w.text).join('; ')}`);
  mkdirSync(out, { recursive: true });
  for (const file of declarations(dir)) cpSync(join(dir, 'dist', file), join(out, file));
  // Written last: its time says when the copy was complete (commonJsUpToDate).
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
}

/**
 * Whether dist/cjs was completed after the package's manifest and every file tsc wrote in dist/.
 * @param {string} dir @param {string} out
 */
function commonJsUpToDate(dir, out) {
  const marker = join(out, 'package.json');
  if (!existsSync(marker)) return false;
  const builtAt = statSync(marker).mtimeMs;
  const inputs = readdirSync(join(dir, 'dist'), { recursive: true, encoding: 'utf8' })
    .filter((file) => !file.startsWith('cjs') && /\.(js|d\.ts)$/.test(file))
    .map((file) => join(dir, 'dist', file));
  return [join(dir, 'package.json'), ...inputs].every((file) => statSync(file).mtimeMs <= builtAt);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const dirs = process.argv.slice(2).map((dir) => resolve(dir));
    compile(ROOT);
    for (const dir of dirs.length > 0 ? dirs : publishablePackages(ROOT).map((d) => join(ROOT, d))) {
      await buildCommonJs(dir);
    }
  } catch (error) {
    console.error(`build-packages: ${/** @type {Error} */ (error).message}`);
    process.exit(1);
  }
}
