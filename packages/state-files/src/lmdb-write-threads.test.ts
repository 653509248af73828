// The write threads of an lmdb-js environment, counted so that its handle closes only once they are done
// with it: on a stand-in of the native environment, called as lmdb-js's native code calls it (progress with
// `this` undefined, the work's completion with the callback as `this`), and on lmdb-js itself, so that a
// version that starts its writes otherwise, or completes them otherwise, fails here rather than in a crash.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { expect, it } from 'vitest';
import { trackWriteThreads } from './lmdb-write-threads.ts';

type Callback = (this: unknown, status: number) => unknown;

/** A stand-in of lmdb-js's native environment: records each start, and its callback, to answer later. */
function fakeEnvironment() {
  const calls: Array<{ address: number; callback: Callback }> = [];
  const env = {
    startWriting(address: number, callback: Callback): undefined {
      if (address < 0) throw new Error('The environment is already closed.');
      calls.push({ address, callback });
      return undefined;
    },
  };
  return { root: { env }, env, calls };
}

/** Answers as writes_complete does: the callback as `this`. */
const complete = (callback: Callback, status: number) => callback.call(callback, status);
/** Answers as write_progress does: `this` undefined. */
const progress = (callback: Callback, status: number) => callback.call(undefined, status);

it('counts a write thread from its start to its completion, not to its progress answers', async () => {
  const { root, env, calls } = fakeEnvironment();
  const threads = trackWriteThreads(root);
  const seen: number[] = [];
  env.startWriting(8, (status) => {
    seen.push(status);
    return status === 2; // lmdb-js's callback answers case 2 with whether callbacks are pending
  });
  expect(threads.started()).toBe(1);
  expect(threads.running()).toBe(1);
  const [call] = calls;
  if (!call) throw new Error('startWriting did not reach the native environment');
  expect(call.address).toBe(8);

  let idle = false;
  const waited = threads.idle().then(() => {
    idle = true;
  });
  expect(progress(call.callback, 1)).toBe(false);
  expect(progress(call.callback, 2)).toBe(true);
  await Promise.resolve();
  expect(idle).toBe(false);
  expect(threads.running()).toBe(1);

  complete(call.callback, 0);
  await waited;
  expect(threads.running()).toBe(0);
  expect(seen).toEqual([1, 2, 0]); // every answer still reaches lmdb-js's callback
});

it('waits for every thread running, whatever the order they complete in, and counts a refused start as ended', async () => {
  const { root, env, calls } = fakeEnvironment();
  const threads = trackWriteThreads(root);
  await threads.idle(); // none running: at once
  env.startWriting(1, () => undefined);
  env.startWriting(2, () => undefined);
  expect(() => env.startWriting(-1, () => undefined)).toThrow('already closed');
  expect(threads.started()).toBe(3);
  expect(threads.running()).toBe(2);
  let idle = false;
  const waited = threads.idle().then(() => {
    idle = true;
  });
  const [first, second] = calls;
  if (!first || !second) throw new Error('two starts expected');
  complete(second.callback, 0);
  complete(second.callback, 0); // a second completion of the same work counts once
  await Promise.resolve();
  expect(idle).toBe(false);
  expect(threads.running()).toBe(1);
  complete(first.callback, 28); // a failed commit (ENOSPC) ends its thread too
  await waited;
  expect(threads.running()).toBe(0);
});

it("counts lmdb-js's own write threads, which have all ended once idle resolves", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-write-threads-'));
  const root = open({ path: join(dir, 'threads.mdb'), compression: false });
  try {
    const threads = trackWriteThreads(root);
    const db = root.openDB<Uint8Array, number>({ name: 'records', encoding: 'binary' });
    // Eight writers, each awaiting its commit as the log's appends do: many threads, some overlapping.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 40; i += 1) {
          await db.put(next++, new Uint8Array(64));
          await root.flushed;
        }
      }),
    );
    expect(threads.started()).toBeGreaterThan(0);
    await threads.idle(); // resolves only when lmdb-js completes each work as trackWriteThreads expects
    expect(threads.running()).toBe(0);
    expect(db.getKeysCount()).toBe(320);
  } finally {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
