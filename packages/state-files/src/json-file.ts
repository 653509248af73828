// A JSON state file read with an error that names it: JSON.parse's own message ("Unexpected token } in
// JSON at position 12") names no file, and the callers used to treat any failure as "no file yet".
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DamagedStateFileError } from './damaged-state-file.ts';

/** The value `text` (the content of `file`) holds; DamagedStateFileError when it is not JSON. */
export function parseStateJson<T>(file: string, text: string, remedy: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new DamagedStateFileError(file, `not JSON: ${(error as Error).message}`, remedy, { cause: error });
  }
}

/** The JSON `file` holds, or null when there is no such file. */
export function readStateJsonSync<T>(file: string, remedy: string): T | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return parseStateJson<T>(file, text, remedy);
}

/** The JSON `file` holds, or null when there is no such file. */
export async function readStateJson<T>(file: string, remedy: string): Promise<T | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return parseStateJson<T>(file, text, remedy);
}
