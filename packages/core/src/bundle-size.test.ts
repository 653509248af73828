// The script-tag bundle's size budget (size-limit style): at most 2 KB minified and gzipped.
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { buildScriptBundle } from '../scripts/bundle.ts';

const BUDGET_BYTES = 2048;

it(`keeps the script-tag bundle within ${BUDGET_BYTES} bytes minified and gzipped`, async () => {
  const code = await buildScriptBundle();
  const gzipped = gzipSync(code, { level: 9 }).length;
  expect(gzipped, `tally.js is ${gzipped} bytes gzipped`).toBeLessThanOrEqual(BUDGET_BYTES);
});

it('does not bundle the contract validator or any Node module', async () => {
  const code = await buildScriptBundle();
  expect(code).not.toMatch(/ajv|require\(|node:/i);
});
