// Writes the script-tag bundle to dist/tally.js (the file to serve for <script src=".../tally.js">) and
// prints its size. Run with `npm run build -w @tally/core`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { buildScriptBundle } from './bundle.ts';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const code = await buildScriptBundle();
mkdirSync(dist, { recursive: true });
writeFileSync(`${dist}tally.js`, code);
console.log(
  `dist/tally.js: ${code.length} bytes minified, ${gzipSync(code, { level: 9 }).length} bytes gzipped`,
);
