// Writes the script-tag bundles to dist/tracker/ (tally.<hash>.js, tally.full.<hash>.js, their source maps
// and manifest.json, which the gateway serves) and prints their sizes. Run with `npm run build -w @tally/core`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { TRACKER_DIST, writeTrackerBundles } from './tracker-bundles.mjs';

const manifest = await writeTrackerBundles();
for (const bundle of manifest.bundles) {
  const code = readFileSync(join(TRACKER_DIST, bundle.file));
  console.log(
    `${bundle.name}.js: ${code.length} bytes minified, ${gzipSync(code, { level: 9 }).length} gzipped`,
  );
}
