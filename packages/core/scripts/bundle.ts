// The script-tag bundle (src/script.ts → one minified IIFE) as text, for the bundle-size test and the
// browser tests, so that they measure and run the bytes the gateway serves: the build itself is
// tracker-bundles.mjs (plain JavaScript, run by `npm run build` before anything is compiled).
import { buildTrackerBundle } from './tracker-bundles.mjs';

export const SCRIPT_ENTRY = 'src/script.ts';
export const FULL_SCRIPT_ENTRY = 'src/script-full.ts';

/** The minified base script-tag bundle (tally.js) as text. */
export async function buildScriptBundle(entry = SCRIPT_ENTRY): Promise<string> {
  return (await buildTrackerBundle(entry)).code;
}
