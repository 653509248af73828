// Test layout: unit tests sit beside the code; tests that start real services (Redis, processes) live in
// test/ and get their service endpoints from test/setup/services.ts. Tests run the TypeScript sources: the
// `@tally/source` export condition resolves the workspace packages to their src/ (the compiled dist/ is
// what `npm start` and the image run).
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
          // A limit for a test that hangs, not a speed requirement: some unit tests start a thread, chDB
          // or a socket, and on 2 cores beside the integration suite 5 s (vitest's default) was overrun.
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/setup/services.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
