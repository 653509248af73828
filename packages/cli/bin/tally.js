#!/usr/bin/env node
// The `tally` command. In a checkout that has the TypeScript sources and tsx (development), it runs the
// sources, so it is never older than the code; elsewhere (the image, an install without dev dependencies)
// it runs the compiled dist/.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const sources = new URL('../src/main.ts', import.meta.url);
const tsx = existsSync(sources) ? await import('tsx/esm/api').catch(() => null) : null;
if (tsx) {
  tsx.register();
  // The workspace packages resolve to their sources too (the `@tally/source` export condition).
  register('./source-condition.mjs', import.meta.url);
  await import(sources.href);
} else {
  await import('../dist/main.js');
}
