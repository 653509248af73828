// The manifests of the published packages: what npm reads when it packs, publishes and installs them. The
// tarballs themselves are installed and used in test/packages-install.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './build.mjs';
import { CJS_TARGET, commonJsEntries, publishablePackages } from './build-packages.mjs';

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type: string; url: string; directory: string };
  types?: string;
  main?: string;
  files?: string[];
  sideEffects?: boolean;
  engines?: { node?: string };
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  exports?: Record<string, Record<string, unknown>>;
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const manifest = (dir: string) => JSON.parse(read(`${dir}/package.json`)) as Manifest;
const PUBLISHED = [
  'packages/backoff',
  'packages/contract',
  'packages/core',
  'packages/react',
  'packages/revenue',
];

describe('the published packages', () => {
  it('are the SDKs and the contract they share; every other workspace stays private', () => {
    expect(publishablePackages(ROOT)).toEqual(PUBLISHED);
  });

  it.each(PUBLISHED)('%s: licence, version, repository, entry points, files', (dir) => {
    const pkg = manifest(dir);
    const root = manifest('.');
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe(root.license);
    expect(read(`${dir}/LICENSE`)).toBe(read('LICENSE'));
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.repository).toEqual({ ...manifest(PUBLISHED[0] as string).repository, directory: dir });
    expect(pkg.types).toBe('./dist/index.d.ts');
    expect(pkg.sideEffects).toBe(false);
    // Only the compiled output: no sources, tests or build information (README and LICENSE npm adds itself).
    expect(pkg.files?.filter((pattern) => !pattern.startsWith('!'))).toEqual([
      'dist/**/*.js',
      'dist/**/*.d.ts',
      'dist/**/*.js.map',
      ...(commonJsEntries(pkg as never).length > 0 ? ['dist/cjs/package.json'] : []),
    ]);
    expect(pkg.scripts?.prepack).toBe('node ../../scripts/build-packages.mjs .');
    // Its workspace dependencies are published too (npm would not find a private one).
    for (const name of Object.keys(pkg.dependencies ?? {}).filter((n) => n.startsWith('@tally/'))) {
      expect(
        PUBLISHED.map((d) => manifest(d).name),
        `${dir} depends on ${name}`,
      ).toContain(name);
      expect(pkg.dependencies?.[name]).toBe(`^${manifest(`packages/${name.slice(7)}`).version}`);
    }
  });

  it('has a CommonJS copy where servers require() it, on the Node.js the revenue SDK names', () => {
    const cjs = Object.fromEntries(PUBLISHED.map((dir) => [dir, commonJsEntries(manifest(dir) as never)]));
    expect(cjs['packages/revenue']).toEqual([{ esm: './dist/index.js', cjs: './dist/cjs/index.js' }]);
    // What the revenue SDK's CommonJS copy requires: the contract's validator and the shared backoff.
    expect(cjs['packages/contract']).toEqual([{ esm: './dist/index.js', cjs: './dist/cjs/index.js' }]);
    expect(cjs['packages/backoff']).toEqual([{ esm: './dist/index.js', cjs: './dist/cjs/index.js' }]);
    // The browser tracker and its React binding are ES modules only (see docs/design/build-and-release.md).
    expect(cjs['packages/core']).toEqual([]);
    expect(cjs['packages/react']).toEqual([]);
    expect(manifest('packages/revenue').engines).toEqual({ node: `>=${CJS_TARGET.replace('node', '')}` });
    expect(manifest('packages/contract').engines).toEqual(manifest('packages/revenue').engines);
    expect(manifest('packages/backoff').engines).toEqual(manifest('packages/revenue').engines);
    expect(read('packages/revenue/README.md')).toContain(`Node ${CJS_TARGET.replace('node', '')}+`);
  });
});
