// Builds the script-tag bundle (src/script.ts → one minified IIFE) with esbuild. Used by the build script,
// by the bundle-size test and by the browser tests, so all three measure and run the same bytes.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const SCRIPT_ENTRY = fileURLToPath(new URL('../src/script.ts', import.meta.url));

/** The minified script-tag bundle as text. */
export async function buildScriptBundle(): Promise<string> {
  const result = await build({
    entryPoints: [SCRIPT_ENTRY],
    bundle: true,
    minify: true,
    format: 'iife',
    // Browsers of the last few years: optional chaining and ?? stay as they are (smaller).
    target: ['es2020'],
    platform: 'browser',
    write: false,
    legalComments: 'none',
    // The workspace packages' TypeScript sources, not their compiled dist/ (see ARCHITECTURE.md).
    conditions: ['@tally/source'],
  });
  const [file] = result.outputFiles;
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}
