// The script-tag bundle's size budget (size-limit style): tally.js at most 2 KB minified and gzipped, the
// bytes the gateway serves. tally.full.js (the optional features) is measured against a budget of its own.
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { buildScriptBundle, FULL_SCRIPT_ENTRY } from '../scripts/bundle.ts';

const BUDGET_BYTES = 2048;
const FULL_BUDGET_BYTES = 3072;

it(`keeps the script-tag bundle within ${BUDGET_BYTES} bytes minified and gzipped`, async () => {
  const code = await buildScriptBundle();
  const gzipped = gzipSync(code, { level: 9 }).length;
  expect(gzipped, `tally.js is ${gzipped} bytes gzipped`).toBeLessThanOrEqual(BUDGET_BYTES);
});

it(`keeps tally.full.js within ${FULL_BUDGET_BYTES} bytes minified and gzipped`, async () => {
  const code = await buildScriptBundle(FULL_SCRIPT_ENTRY);
  const gzipped = gzipSync(code, { level: 9 }).length;
  expect(gzipped, `tally.full.js is ${gzipped} bytes gzipped`).toBeLessThanOrEqual(FULL_BUDGET_BYTES);
});

it('does not bundle the contract validator or any Node module', async () => {
  for (const code of [await buildScriptBundle(), await buildScriptBundle(FULL_SCRIPT_ENTRY)])
    expect(code).not.toMatch(/ajv|require\(|node:/i);
});

it('leaves the optional features out of the base bundle', async () => {
  const base = await buildScriptBundle();
  const full = await buildScriptBundle(FULL_SCRIPT_ENTRY);
  for (const marker of ['Outbound Link: Click', 'File Download', 'globalPrivacyControl', 'auxclick']) {
    expect(base).not.toContain(marker);
    expect(full).toContain(marker);
  }
  // What the base carries of the features: the opt-out key and the local-page check.
  expect(base).toContain('tally_opt_out');
});
