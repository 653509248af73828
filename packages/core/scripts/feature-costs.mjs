// What each optional feature of the tracker costs in the script-tag bundle: the base script (tally.js) and
// the base plus one feature, each minified and gzipped (level 9, as the gateway serves it), printed as one
// JSON object. `node packages/core/scripts/feature-costs.mjs`; the figures are in the package's README.
// @ts-check
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildTrackerBundle, CORE_ROOT } from './tracker-bundles.mjs';

/** Entry modules, as text resolved from src/: the base, and the base with one feature. */
const VARIANTS = {
  base: `import { startFromScriptTag } from './script-tag.ts'; startFromScriptTag();`,
  hashRouting: `import { routeByHash } from './browser.ts'; import { scriptData, startFromScriptTag } from './script-tag.ts';
    if (scriptData()?.hashRouting) routeByHash(); startFromScriptTag();`,
  // Do Not Track and exclusion share one filter (privacyFilter): either brings both.
  respectDoNotTrack: `import { privacyFilter } from './extras.ts'; import { flag, scriptData, startFromScriptTag } from './script-tag.ts';
    startFromScriptTag(privacyFilter({ respectDoNotTrack: flag(scriptData()?.respectDnt) }));`,
  exclude: `import { privacyFilter } from './extras.ts'; import { scriptData, startFromScriptTag } from './script-tag.ts';
    startFromScriptTag(privacyFilter({ exclude: scriptData()?.exclude?.split(',') }));`,
  outboundLinksAndDownloads: `import { trackLinks } from './extras.ts'; import { flag, scriptData, startFromScriptTag } from './script-tag.ts';
    const tracker = startFromScriptTag();
    if (tracker) trackLinks(tracker, { outbound: flag(scriptData()?.outboundLinks), downloads: flag(scriptData()?.fileDownloads) });`,
};

/** @param {string} contents */
async function gzippedSize(contents) {
  const result = await build({
    stdin: { contents, resolveDir: `${CORE_ROOT}src`, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2020'],
    platform: 'browser',
    write: false,
    legalComments: 'none',
    conditions: ['@tally/source'],
  });
  return gzipSync(result.outputFiles[0]?.text ?? '', { level: 9 }).length;
}

/** @type {Record<string, { gzipped: number, added: number }>} */
const figures = {};
const base = await gzippedSize(VARIANTS.base);
for (const [name, contents] of Object.entries(VARIANTS)) {
  const gzipped = await gzippedSize(contents);
  figures[name] = { gzipped, added: gzipped - base };
}
// Everything: tally.full.js as built.
const full = gzipSync((await buildTrackerBundle('src/script-full.ts')).code, { level: 9 }).length;
figures.full = { gzipped: full, added: full - base };
console.log(JSON.stringify(figures));
