// The tests' children (test/support/processes.ts): stop() gives a process that does not exit after its
// signal STOP_GRACE_MS (here a test's own 500 ms), then kills it and fails with what it printed, so that a
// child hanging on its way out fails its test with its output rather than timing the test out silently
// and staying behind for the tests after it. One that exits on its signal resolves as before.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { outputMatching, spawnWithOutput } from './support/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-child-stop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A child that prints "ready" once its SIGTERM handler (`onSigterm`, a statement) is in place, then waits. */
async function readyChild(name: string, onSigterm: string) {
  const path = join(dir, name);
  writeFileSync(
    path,
    `process.on('SIGTERM', () => { ${onSigterm} }); setInterval(() => {}, 1000); console.log('ready');`,
  );
  const child = spawnWithOutput(path, {});
  await outputMatching(child, /ready/, 10_000);
  return child;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('kills a child still running after its signal and fails with its output', async () => {
  const child = await readyChild('hangs.mjs', "console.log('SIGTERM received, staying');");
  const pid = child.process.pid as number;
  await expect(child.stop('SIGTERM', 500)).rejects.toThrow(
    /had not exited 500 ms after SIGTERM; killed\. Its output:\nready\nSIGTERM received, staying/,
  );
  expect(child.process.signalCode).toBe('SIGKILL');
  expect(alive(pid)).toBe(false);
});

it('resolves with the exit code of a child that exits on its signal', async () => {
  const child = await readyChild('exits.mjs', 'process.exit(3);');
  expect(await child.stop('SIGTERM', 500)).toBe(3);
  // Stopped already: at once, the same code.
  expect(await child.stop()).toBe(3);
});
