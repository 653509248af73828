// The React versions that @tally/react is tested with, and how an esbuild bundle gets exactly one of them.
//
// React 19 is installed as `react` / `react-dom`: what the workspace's code, its types and plain imports see.
// React 18 sits beside it under the npm aliases `react-18` / `react-dom-18` (devDependencies of @tally/react).
// Node's own resolution cannot run React 18 from that install: react-dom-18's files `require('react')`, which
// finds React 19, and a component whose hooks come from one copy while the other copy renders it breaks
// (React keeps the current renderer's dispatcher in its own module state). So every React 18 run is an esbuild
// bundle whose `alias` maps `react` → `react-18` and `react-dom` → `react-dom-18`, subpaths included
// (react/jsx-runtime, react-dom/client, react-dom/server), for every importer in the bundle: the test's code,
// @tally/react, and the React packages themselves. `assertOneReact` then checks from the bundle's metafile
// that the chosen copy, and only it, went in.
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Metafile } from 'esbuild';

export interface ReactVersion {
  /** The major version, as the tests name it. */
  major: 18 | 19;
  /** esbuild `alias` that makes a bundle use this version (none: React 19 is the installed `react`). */
  alias: Record<string, string>;
  /** The installed packages (node_modules/<name>) a bundle of this version draws React from. */
  packages: readonly string[];
}

export const REACT_VERSIONS: readonly ReactVersion[] = [
  {
    major: 18,
    alias: { react: 'react-18', 'react-dom': 'react-dom-18' },
    packages: ['react-18', 'react-dom-18'],
  },
  { major: 19, alias: {}, packages: ['react', 'react-dom'] },
];

/** packages/react: esbuild resolves an alias's target from the working directory, so bundles run from here. */
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/** esbuild options that make a bundle use `version` of React; the metafile is for assertOneReact. */
export function reactBuildOptions(version: ReactVersion) {
  return {
    alias: version.alias,
    absWorkingDir: PACKAGE_DIR,
    metafile: true,
    // The workspace packages' TypeScript sources, not their compiled dist/ (see docs/design/build-and-release.md).
    conditions: ['@tally/source'],
  } as const satisfies BuildOptions;
}

// node_modules/react/, node_modules/react-dom/, node_modules/react-18/, node_modules/react-dom-18/ (not react-is).
const REACT_PACKAGE = /(?:^|[\\/])node_modules[\\/](react(?:-dom)?(?:-\d+)?)[\\/]/;

/** Throws unless the bundle's React files come from `version`'s packages, and only from them. */
export function assertOneReact(metafile: Metafile, version: ReactVersion): void {
  const used = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const name = REACT_PACKAGE.exec(input)?.[1];
    if (name) used.add(name);
  }
  const expected = new Set(version.packages);
  if (used.size !== expected.size || [...used].some((name) => !expected.has(name))) {
    throw new Error(
      `a React ${version.major} bundle must draw React from ${[...expected].join(' and ')} only; ` +
        `it drew from ${[...used].join(', ') || 'nothing'}`,
    );
  }
}
