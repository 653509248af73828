// The build that `npm start` runs first: on a small workspace of its own (two projects, one importing the
// other through its package name, compiled by the real TypeScript compiler), a missing or stale dist/ is
// found and recompiled, a fresh one is left alone, and a changed test file is not a reason to compile.
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, inputsOf, projectsOf, ROOT, staleness } from './build.mjs';

let root: string;

/**
 * Writes a file of the temporary workspace; the workspace's first files are dated an hour ago, and every
 * compilation is dated a minute ago (`compiledAMinuteAgo`), so that a file written afterwards is newer than
 * the compilation whatever the file system's clock granularity.
 */
function write(path: string, text: string, secondsAgo = 0) {
  const file = join(root, path);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
  if (secondsAgo) {
    const at = Date.now() / 1000 - secondsAgo;
    utimesSync(file, at, at);
  }
}

/** Dates every source an hour ago and every compilation a minute ago: what `tsc -b` wrote stays up to date. */
function compiledAMinuteAgo() {
  const hourAgo = Date.now() / 1000 - HOUR;
  for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!file.startsWith('node_modules') && !file.includes('dist'))
      utimesSync(join(root, file), hourAgo, hourAgo);
  }
  const minuteAgo = Date.now() / 1000 - 60;
  for (const project of ['packages/a', 'packages/b']) {
    utimesSync(join(root, project, 'dist/.tsbuildinfo'), minuteAgo, minuteAgo);
  }
}

/** What `@w/b` exports, imported by plain Node (no tsx, no export condition) from the workspace's root. */
function shoutOfCompiledB(): string {
  return execFileSync(
    process.execPath,
    ['--input-type=module', '-e', "console.log((await import('@w/b')).shout)"],
    {
      cwd: root,
      encoding: 'utf8',
    },
  ).trim();
}

function project(dir: string, name: string, references: string[]) {
  write(
    `${dir}/package.json`,
    JSON.stringify({
      name,
      type: 'module',
      exports: { '.': { '@tally/source': './src/index.ts', default: './dist/index.js' } },
    }),
    HOUR,
  );
  write(
    `${dir}/tsconfig.build.json`,
    JSON.stringify({
      extends: '../../tsconfig.package.json',
      references: references.map((path) => ({ path })),
    }),
    HOUR,
  );
}
const HOUR = 3600;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tally-build-'));
  for (const config of ['tsconfig.base.json', 'tsconfig.package.json']) {
    write(config, readFileSync(join(ROOT, config), 'utf8'), HOUR);
  }
  write('package.json', JSON.stringify({ name: 'workspace', private: true, type: 'module' }), HOUR);
  write(
    'tsconfig.build.json',
    JSON.stringify({
      files: [],
      references: [
        { path: './packages/a/tsconfig.build.json' },
        { path: './packages/b/tsconfig.build.json' },
      ],
    }),
    HOUR,
  );
  project('packages/a', '@w/a', []);
  write('packages/a/src/index.ts', "export { greeting } from './greeting.ts';\n", HOUR);
  write('packages/a/src/greeting.ts', "export const greeting: string = 'hello';\n", HOUR);
  write('packages/a/src/greeting.test.ts', '// a test: not compiled\n', HOUR);
  project('packages/b', '@w/b', ['../a/tsconfig.build.json']);
  write(
    'packages/b/src/index.ts',
    "import { greeting } from '@w/a';\nexport const shout = greeting.toUpperCase();\n",
    HOUR,
  );
  // The compiler and @types/node come from the repository's node_modules; the projects from their links.
  mkdirSync(join(root, 'node_modules/@w'), { recursive: true });
  for (const entry of ['typescript', '@types'])
    symlinkSync(join(ROOT, 'node_modules', entry), join(root, 'node_modules', entry));
  symlinkSync(join(root, 'packages/a'), join(root, 'node_modules/@w/a'));
  symlinkSync(join(root, 'packages/b'), join(root, 'node_modules/@w/b'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the build before start', () => {
  it("reads the projects from tsconfig.build.json, and a project's inputs without its tests", () => {
    expect(projectsOf(root)).toEqual(['packages/a', 'packages/b']);
    expect(inputsOf(root, 'packages/a').sort()).toEqual([
      'packages/a/src/greeting.ts',
      'packages/a/src/index.ts',
      'packages/a/tsconfig.build.json',
      'tsconfig.base.json',
      'tsconfig.package.json',
    ]);
  });

  it('compiles what was never compiled, into JavaScript that plain Node runs', () => {
    expect(staleness(root)).toBe('packages/a has not been compiled');
    const said: string[] = [];
    expect(buildIfStale(root, (line) => said.push(line))).toBe(true);
    expect(said).toEqual(['Compiling TypeScript to dist/ (packages/a has not been compiled)']);
    expect(staleness(root)).toBeNull();
    compiledAMinuteAgo();
    expect(staleness(root)).toBeNull();
    expect(readFileSync(join(root, 'packages/a/dist/index.js'), 'utf8')).toContain("from './greeting.js'");
    // Without the source condition @w/a resolves to its dist/ (Node 20 cannot load src/*.ts at all).
    expect(shoutOfCompiledB()).toBe('HELLO');
  });

  it('leaves a fresh output alone', () => {
    const said: string[] = [];
    expect(buildIfStale(root, (line) => said.push(line))).toBe(false);
    expect(said).toEqual([]);
  });

  it('does not compile for a changed test file', () => {
    write('packages/a/src/greeting.test.ts', '// a test, changed\n');
    expect(staleness(root)).toBeNull();
  });

  it('recompiles after a source changed, and the dependent project sees the change', () => {
    write('packages/a/src/greeting.ts', "export const greeting: string = 'bonjour';\n");
    expect(staleness(root)).toBe('packages/a/src/greeting.ts changed since the last build');
    expect(buildIfStale(root, () => {})).toBe(true);
    expect(staleness(root)).toBeNull();
    compiledAMinuteAgo();
    expect(readFileSync(join(root, 'packages/a/dist/greeting.js'), 'utf8')).toContain("'bonjour'");
    expect(shoutOfCompiledB()).toBe('BONJOUR');
  });

  it('recompiles for a new source file, and for a source touched but unchanged', () => {
    write('packages/b/src/extra.ts', 'export const extra = 1;\n');
    expect(staleness(root)).toBe('packages/b/src/extra.ts changed since the last build');
    buildIfStale(root, () => {});
    expect(readFileSync(join(root, 'packages/b/dist/extra.js'), 'utf8')).toContain('extra = 1');
    expect(staleness(root)).toBeNull();
    compiledAMinuteAgo();
    expect(staleness(root)).toBeNull();

    // `tsc -b` compiles nothing for a file touched without a change, but dates the output anew.
    write('tsconfig.base.json', readFileSync(join(root, 'tsconfig.base.json'), 'utf8'));
    expect(staleness(root)).toBe('tsconfig.base.json changed since the last build');
    expect(buildIfStale(root, () => {})).toBe(true);
    expect(staleness(root)).toBeNull();
  });
});

describe("the repository's build configuration", () => {
  const workspaces = ['packages', 'services'].flatMap((dir) =>
    readdirSync(join(ROOT, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${dir}/${entry.name}`),
  );
  const manifest = (dir: string) =>
    JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      exports?: Record<string, Record<string, string | { types?: string; default?: string }>>;
    };
  const dirOf = new Map(workspaces.map((dir) => [manifest(dir).name, dir]));

  it('builds every workspace, each referencing exactly the workspaces it depends on', () => {
    expect(projectsOf(ROOT).sort()).toEqual(workspaces.sort());
    for (const dir of workspaces) {
      const { dependencies, peerDependencies } = manifest(dir);
      const needed = Object.keys({ ...dependencies, ...peerDependencies })
        .flatMap((name) => dirOf.get(name) ?? [])
        .sort();
      const config = JSON.parse(readFileSync(join(ROOT, dir, 'tsconfig.build.json'), 'utf8')) as {
        references?: Array<{ path: string }>;
      };
      const referenced = (config.references ?? []).map((ref) => join(dir, ref.path, '..')).sort();
      expect(referenced, dir).toEqual(needed);
    }
  });

  it('exports each module as its source under @tally/source and its compiled file otherwise', () => {
    for (const dir of workspaces) {
      for (const [path, target] of Object.entries(manifest(dir).exports ?? {})) {
        const source = target['@tally/source'] as string;
        expect(Object.keys(target)[0], `${dir} ${path}`).toBe('@tally/source');
        expect(source, `${dir} ${path}`).toMatch(/^\.\/src\/.+\.ts$/);
        // Test helpers (they import vitest, a dev dependency) exist only for the sources.
        const compiled = ['./testing', './conformance'].includes(path)
          ? undefined
          : source.replace(/^\.\/src\//, './dist/').replace(/\.ts$/, '.js');
        // The ES module is `default`, or `import` where a CommonJS copy sits beside it under `require`
        // (the published packages: scripts/build-packages.mjs), each with its declarations under `types`.
        const { import: esm, require: cjs } = target as Record<string, { types?: string; default?: string }>;
        if (cjs) {
          expect(Object.keys(target), `${dir} ${path}`).toEqual(['@tally/source', 'import', 'require']);
          expect(esm?.default, `${dir} ${path}`).toBe(compiled);
          expect(esm?.types, `${dir} ${path}`).toBe(compiled?.replace(/\.js$/, '.d.ts'));
          expect(cjs.default, `${dir} ${path}`).toBe(compiled?.replace(/^\.\/dist\//, './dist/cjs/'));
          expect(cjs.types, `${dir} ${path}`).toBe(cjs.default?.replace(/\.js$/, '.d.ts'));
        } else {
          expect(target.default, `${dir} ${path}`).toBe(compiled);
          if (target.types) expect(target.types, `${dir} ${path}`).toBe(compiled?.replace(/\.js$/, '.d.ts'));
        }
      }
    }
  });
});
