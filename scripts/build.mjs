// Compiles every workspace package and service from src/ to dist/ (`npm run build`), and, as `npm start`'s
// first step (`--if-stale`), only when the compiled output is missing or older than its sources. Plain
// JavaScript, so that it runs before anything is compiled and without tsx.
//
// The projects are tsconfig.build.json's references; the TypeScript compiler's build mode (`tsc -b`) compiles
// them in dependency order and recompiles only what changed. Deciding that nothing changed is done here
// rather than by `tsc -b`, from modification times: a process that starts often should not pay for the
// compiler, and an install without dev dependencies (no compiler) still starts from an up-to-date dist/.
// `tsc -b` writes each project's dist/.tsbuildinfo when it compiles the project and touches it when a
// source was touched but compiles the same, so a project is up to date when that file is newer than every
// input the compiler reads for it.
// @ts-check
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Configuration files every project's compilation reads, at the root. */
const SHARED_CONFIGS = ['tsconfig.base.json', 'tsconfig.package.json'];

/**
 * The directories (relative to `root`) of the projects tsconfig.build.json builds.
 * @param {string} root
 * @returns {string[]}
 */
export function projectsOf(root) {
  /** @type {{ references?: Array<{ path: string }> }} */
  const solution = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'));
  return (solution.references ?? []).map((ref) => relative(root, join(root, ref.path, '..')));
}

/**
 * What the compiler reads for a project: its TypeScript sources other than tests (tsconfig.package.json's
 * include and exclude), its tsconfig.build.json and the shared configuration files.
 * @param {string} root
 * @param {string} project
 * @returns {string[]} paths relative to `root`
 */
export function inputsOf(root, project) {
  const src = join(project, 'src');
  const sources = readdirSync(join(root, src), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => join(src, file));
  return [...sources, join(project, 'tsconfig.build.json'), ...SHARED_CONFIGS];
}

/**
 * Why the compiled output under `root` is out of date, or null when every project's dist/ is newer than
 * its inputs.
 * @param {string} root
 * @returns {string | null}
 */
export function staleness(root) {
  for (const project of projectsOf(root)) {
    const buildInfo = join(root, project, 'dist', '.tsbuildinfo');
    if (!existsSync(buildInfo)) return `${project} has not been compiled`;
    const builtAt = statSync(buildInfo).mtimeMs;
    for (const input of inputsOf(root, project)) {
      if (statSync(join(root, input)).mtimeMs > builtAt) return `${input} changed since the last build`;
    }
  }
  return null;
}

/**
 * Runs the TypeScript compiler's build mode on tsconfig.build.json; throws if it fails or is not installed.
 * @param {string} root
 */
export function compile(root) {
  let tsc;
  try {
    const typescript = createRequire(join(root, 'package.json')).resolve('typescript/package.json');
    tsc = join(typescript, '..', 'bin', 'tsc');
  } catch {
    throw new Error(
      'the TypeScript compiler is not installed (a dev dependency): run `npm install`, then `npm run build`',
    );
  }
  const result = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0)
    throw new Error(`the build failed (tsc -b exited with ${result.status ?? result.signal})`);
}

/**
 * Compiles when the output under `root` is missing or stale; says why on `log`. Returns whether it compiled.
 * @param {string} root
 * @param {(line: string) => void} [log]
 */
export function buildIfStale(root, log = (line) => console.error(line)) {
  const reason = staleness(root);
  if (!reason) return false;
  log(`Compiling TypeScript to dist/ (${reason})`);
  compile(root);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv.includes('--if-stale')) buildIfStale(ROOT);
    else compile(ROOT);
  } catch (error) {
    console.error(`build: ${/** @type {Error} */ (error).message}`);
    process.exit(1);
  }
}
