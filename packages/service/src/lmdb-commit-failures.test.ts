// The listener that keeps lmdb-js's failed commits from ending a process, in processes of their own (an
// unhandled rejection ends the one it happens in): lmdb-js's orphan "Commit failed" rejection, and a cause
// of a failed commit rejected alone, pass; any other unhandled rejection still ends the process, with its
// error. (The real thing, a full disk under `npm start`: test/disk-full.test.ts.)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('./lmdb-commit-failures.ts', import.meta.url));

/** Runs `body` in a Node process of its own after installing the listener; its exit code and output. */
function run(body: string): { status: number | null; output: string } {
  const script = `
    const { tolerateLmdbCommitFailures } = await import(${JSON.stringify(MODULE)});
    tolerateLmdbCommitFailures((error) => console.log('ignored:', error.message));
    ${body}
    // After the rejections were handled (at the end of this turn, before the next one's callbacks).
    setImmediate(() => console.log('still running'));
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: child.status, output: `${child.stdout}${child.stderr}` };
}

it("lets lmdb-js's rejections of a failed commit pass, its cause with it", () => {
  const { status, output } = run(`
    // As lmdb-js's write.js does: the cause (made in write.js) in a promise of its own, rejected beside
    // the carrier.
    let fail;
    const commitError = new Promise((_, reject) => { fail = reject; });
    const carrier = Object.assign(new Error('Commit failed (see commitError for details)'), { commitError });
    const cause = Object.assign(new Error('Input/output error'), { code: 5 });
    cause.stack = 'Error: Input/output error\\n    at Function.<anonymous> (file:///app/node_modules/lmdb/write.js:516:7)';
    Promise.reject(carrier);
    fail(cause);
  `);
  expect(output).toContain('ignored: Commit failed (see commitError for details)');
  expect(output).toContain('still running');
  expect(status).toBe(0);
});

it('lets the cause of a failed commit pass when it is rejected alone, as lmdb-js makes it', () => {
  const { status, output } = run(`
    const cause = Object.assign(new Error('No space left on device'), { code: 28 });
    cause.stack = 'Error: No space left on device\\n    at Function.<anonymous> (file:///app/node_modules/lmdb/write.js:516:7)';
    Promise.reject(cause);
  `);
  expect(output).toContain('ignored: No space left on device');
  expect(output).toContain('still running');
  expect(status).toBe(0);
});

it('still ends the process on any other unhandled rejection', () => {
  const { status, output } = run(`
    Promise.reject(Object.assign(new Error('not from lmdb'), { code: 28 }));
  `);
  expect(output).toContain('not from lmdb');
  expect(output).not.toContain('still running');
  expect(status).toBe(1);
});
