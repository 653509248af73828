// Tally's state files are its users' data and its secrets (tokens' hashes, the dashboard's sessions, the
// warehouse's passwords, the records themselves): readable by the user Tally runs as and no one else.
// Files 0600, directories 0700, every one Tally creates under TALLY_DATA_DIR, chDB's and LMDB's included.
// Three layers, because the files come from three kinds of writer:
//   - keepNewFilesPrivate(): the process's umask 077, set by every Tally process (the service runner, the
//     CLI) before anything is opened, so that files made by code that takes no mode (chDB's engine, which
//     creates its parts all the time; LMDB, which creates its files 0664) come out 0600 and 0700;
//   - makePrivateDir() and the explicit modes where Tally's own code creates a file, so that the stores are
//     private when used as libraries (tests, embedders) whatever the umask;
//   - makePrivateTree() at a service's start: what an older Tally created group- or world-readable (0644
//     in 0755, LMDB's and chDB's defaults under the usual umask 022) loses those bits.
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** From now on, files and directories this process creates get no group or other permission bits. */
export function keepNewFilesPrivate(): void {
  // The umask is the process's; a worker thread may not set it (its process's main thread did).
  if (isMainThread) process.umask(0o077);
}

/** Creates `dir` (and its missing parents) 0700, and makes it 0700 if it exists and is ours. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  restrict(dir, PRIVATE_DIR_MODE);
}

/** Makes each of `files` that exists 0600 (LMDB creates its files 0664 less the umask). */
export function makePrivateFiles(...files: string[]): void {
  for (const file of files) restrict(file, PRIVATE_FILE_MODE);
}

/**
 * Takes group and other permissions off `root` and everything under it that this process's user owns
 * (files and directories; symbolic links are left alone). Nothing happens when `root` does not exist, and
 * nothing is walked when `root` is private already: a Tally that made it private made everything under it
 * private too (umask 077), so only the first start after an older Tally walks a large warehouse.
 */
export function makePrivateTree(root: string): void {
  try {
    if ((lstatSync(root).mode & 0o077) === 0) return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const uid = process.getuid?.();
  const visit = (path: string) => {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // gone meanwhile (chDB's temporary files)
      throw error;
    }
    if (stat.isSymbolicLink() || (uid !== undefined && stat.uid !== uid)) return;
    if (stat.mode & 0o077) restrict(path, stat.mode & 0o700);
    if (!stat.isDirectory()) return;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const name of names) visit(join(path, name));
  };
  visit(root);
}

function restrict(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Not there (yet, or any more), or not ours (a volume owned by another user): nothing to take away.
    if (code !== 'ENOENT' && code !== 'EPERM') throw error;
  }
}
