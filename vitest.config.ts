// Test layout: unit tests sit beside the code; tests that start real services (Redis, processes) live in
// test/ and get their service endpoints from test/setup/services.ts. Tests run the TypeScript sources: the
// `@tally/source` export condition resolves the workspace packages to their src/ (the compiled dist/ is
// what `npm start` and the image run).
import { availableParallelism } from 'node:os';
import { defaultClientConditions, defaultServerConditions, type Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * Adds the condition to every Vite environment: the one that runs the tests, and vitest's own, which loads
 * the global setup (top-level `resolve.conditions` reaches only the browser-side environment).
 */
const sourceCondition: Plugin = {
  name: 'tally-source-condition',
  configEnvironment(name, config) {
    const defaults = name === 'client' ? defaultClientConditions : defaultServerConditions;
    config.resolve ??= {};
    config.resolve.conditions = ['@tally/source', ...(config.resolve.conditions ?? defaults)];
  },
};

export default defineConfig({
  plugins: [sourceCondition],
  test: {
    // A `.env` in the checkout (the README suggests one) is the developer's, not the tests': every test
    // process, and each child it spawns with this environment, reads an empty env file instead.
    env: { TALLY_ENV_FILE: '/dev/null' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            'packages/*/src/**/*.test.ts',
            'services/*/src/**/*.test.ts',
            'services/dashboard/web/src/**/*.test.ts',
            'scripts/**/*.test.ts',
          ],
          // Two files at a time even on 2 cores (vitest's default there is one, availableParallelism - 1):
          // unit files are short and mostly wait on nothing, and two workers took the suite from ~580 s to
          // ~345 s on a 2-core host three times slower than the benchmarks'. The integration project runs
          // after it (groupOrder), at vitest's default, so its processes never share the cores with these.
          maxWorkers: Math.max(2, availableParallelism() - 1),
          sequence: { groupOrder: 0 },
          // A limit for a test that hangs, not a speed requirement: some unit tests start a thread, chDB
          // or a socket; on that slow host, two files at a time, the longest (property tests of visits
          // and the revenue history) took up to 23 s, and 5 s (vitest's default), then 30 s, were too near.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/setup/services.ts'],
          sequence: { groupOrder: 1 },
          // A limit for a test that hangs, not a speed requirement. Tests that start Tally's process
          // several times take ~20 s on the machine of the benchmarks and up to 57 s on a host three times
          // slower (test/warehouse-damage.test.ts), where 60 s failed CI once: 180 s, for every test but
          // the few that set a longer one of their own.
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
