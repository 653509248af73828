// Where the CLI works from: like git finding its repository, the nearest directory, from the working
// directory up, that holds Tally's data (`.tally`) or its settings (`.env`). So `cd examples && npx tally
// tokens list` sees the tokens of the Tally started at the repository's root, and `tally sql` does not
// create a new, empty warehouse in the subdirectory.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The nearest directory from `start` up with a `.tally` directory or a `.env` file; null if none. */
export function findBaseDir(start: string): string | null {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.tally')) || existsSync(join(dir, '.env'))) return dir;
    if (dirname(dir) === dir) return null;
  }
}
