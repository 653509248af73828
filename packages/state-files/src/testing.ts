// Test helpers for damaged state files (exported under the @tally/source condition only): damage a real
// file on disk as a disk, a crash or a careless copy would, and run code in a child process of its own,
// because the failure being tested for is a signal (SIGBUS, SIGSEGV) that would end the test runner itself.
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * `truncated`: cut to half its length (as a full disk or an interrupted copy leaves it); `garbled`: its first
 * 8 KiB (the meta pages of an LMDB file) overwritten with other bytes.
 */
export function damageFile(file: string, how: 'truncated' | 'garbled'): void {
  if (how === 'truncated') {
    truncateSync(file, Math.floor(statSync(file).size / 2));
    return;
  }
  const bytes = readFileSync(file);
  for (let i = 0; i < Math.min(bytes.length, 8192); i++) bytes[i] = (i * 131 + 7) & 0xff;
  writeFileSync(file, bytes);
}

/** How a child process ended: its exit code, or the signal that ended it, and what it wrote to stderr. */
export interface Outcome {
  status: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Runs `script` (an ES module, TypeScript allowed, the workspace packages from their sources) in a child
 * Node.js process from the repository's root; an uncaught error ends it with exit code 1.
 */
export function runInChild(script: string): Outcome {
  const child = spawnSync(
    process.execPath,
    ['--conditions=@tally/source', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  if (child.error) throw child.error;
  return { status: child.status, signal: child.signal, stderr: child.stderr };
}
