// Builds the dashboard's web app with Vite into services/dashboard/web/dist (`npm run build:web`), and, as
// `npm start`'s first step (`--if-stale`), only when dist/ is missing or older than the app's sources.
// Plain JavaScript, so that it runs before anything else is compiled and without tsx.
//
// The build is written to a directory of its own and moved into place whole, so a running dashboard never
// serves half a build, and a failed build leaves the last good one. dist/index.html is the build's stamp:
// it is the newest file of a complete build.
// @ts-check
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEB_ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * What a build reads: the sources, the HTML entry and the build's configuration.
 * @param {string} root
 * @returns {string[]} absolute paths
 */
export function webInputs(root = WEB_ROOT) {
  const src = join(root, 'src');
  const sources = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => !file.endsWith('.test.ts'))
    .map((file) => join(src, file))
    .filter((file) => statSync(file).isFile());
  return [...sources, join(root, 'index.html'), join(root, 'vite.config.ts'), join(root, 'package.json')];
}

/**
 * Why dist/ is out of date, or null when it is newer than every input.
 * @param {string} root
 * @returns {string | null}
 */
export function webStaleness(root = WEB_ROOT) {
  const stamp = join(root, 'dist', 'index.html');
  if (!existsSync(stamp)) return 'the web app has not been built';
  const builtAt = statSync(stamp).mtimeMs;
  for (const input of webInputs(root)) {
    if (statSync(input).mtimeMs > builtAt) return `${relative(root, input)} changed since the last build`;
  }
  return null;
}

/**
 * Runs Vite's production build into `outDir` (default: dist/, replaced whole when the build succeeds).
 * @param {{ root?: string, outDir?: string }} [options]
 * @returns {Promise<string>} the directory written
 */
export async function buildWeb(options = {}) {
  const root = options.root ?? WEB_ROOT;
  /** @type {typeof import('vite')} */
  let vite;
  try {
    vite = await import('vite');
  } catch {
    throw new Error(
      'Vite is not installed (a dev dependency): run `npm install`, then `npm run build:web`, or ship dist/ built',
    );
  }
  const target = options.outDir ?? join(root, 'dist');
  const staging = options.outDir ?? join(root, `.dist-${process.pid}`);
  try {
    await vite.build({
      root,
      configFile: join(root, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir: staging, emptyOutDir: true },
    });
    if (staging !== target) {
      const old = join(root, `.dist-old-${process.pid}`);
      if (existsSync(target)) renameSync(target, old);
      renameSync(staging, target);
      rmSync(old, { recursive: true, force: true });
    }
  } finally {
    if (staging !== target) rmSync(staging, { recursive: true, force: true });
  }
  return target;
}

/**
 * Builds when dist/ is missing or stale; says why on `log`. Returns whether it built.
 * @param {(line: string) => void} [log]
 * @param {string} [root]
 */
export async function buildWebIfStale(log = (line) => console.error(line), root = WEB_ROOT) {
  const reason = webStaleness(root);
  if (!reason) return false;
  log(`Building the dashboard's web app (${reason})`);
  await buildWeb({ root });
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv.includes('--if-stale')) await buildWebIfStale();
    else await buildWeb();
  } catch (error) {
    console.error(`build:web: ${/** @type {Error} */ (error).message}`);
    process.exit(1);
  }
}
