// lmdb-js commits a batch of writes in a thread of libuv's pool, and that thread goes on touching the
// environment after the writes' promises (and `flushed`) may have resolved: lmdb-js 3.5.6 releases the
// transaction lock, then marks the batch committed (which the main thread can read at once), then looks up
// the environment's `__committed__` callbacks (writer.cpp, WriteWorker::Write). Closing the environment's
// last handle in that window deletes what the thread is reading: a use-after-free, which crashed npm start's
// process once in ~30 runs of test/log-pages.test.ts on two busy cores (SIGSEGV in notifyUserCallbacks,
// caught by chDB's signal handler, so that the process hung instead of dying). A handle that closes its
// environment (the record log's reopen, a suspension, close; the state store's close) first waits for its
// write threads to end: each startWriting's work answers its callback a last time once the thread is done
// with the environment (writes_complete, which passes the callback itself as `this`; the progress answers
// before it pass undefined).

/** What starts a write thread in lmdb-js's native environment (RootDatabase.env, not in its types). */
interface NativeEnvironment {
  startWriting?: (address: number, callback: (status: number) => unknown) => unknown;
}

export interface WriteThreads {
  /** Write threads started since the environment opened. */
  started(): number;
  /** Write threads started and not yet ended. */
  running(): number;
  /** Resolves once no write thread of the environment runs (at once if none does). */
  idle(): Promise<void>;
}

/** What closeAfterWriteThreads needs of an lmdb-js RootDatabase. */
interface ClosableRoot {
  /** A thenable only (no catch): resolves once the writes queued so far are on disk. */
  readonly flushed: PromiseLike<unknown>;
  close(): Promise<void>;
}

/**
 * Closes `root` once the writes queued in it have committed and its write threads (`threads`, of the same
 * root) are done with the environment. A failed commit was told to its writes already: not again here.
 */
export async function closeAfterWriteThreads(root: ClosableRoot, threads: WriteThreads): Promise<void> {
  await Promise.resolve(root.flushed).catch(() => {});
  await threads.idle();
  await root.close();
}

/** Counts the write threads of `root`'s environment, wrapping its startWriting. */
export function trackWriteThreads(root: object): WriteThreads {
  const env = (root as { env?: NativeEnvironment }).env;
  const start = env?.startWriting;
  let started = 0;
  let running = 0;
  let waiting: Array<() => void> = [];
  const ended = () => {
    running -= 1;
    if (running > 0) return;
    const resolve = waiting;
    waiting = [];
    for (const r of resolve) r();
  };
  if (env && typeof start === 'function') {
    // An own property: the native prototype's method is read-only, so assigning to it throws.
    const startWriting = function (this: unknown, address: number, callback: (status: number) => unknown) {
      let done = false;
      const answer = function (this: unknown, status: number): unknown {
        // The work's completion (writes_complete) calls with the callback as `this`, and only then.
        if (this === answer && !done) {
          done = true;
          try {
            return callback(status);
          } finally {
            ended();
          }
        }
        return callback(status);
      };
      started += 1;
      running += 1;
      try {
        return start.call(this, address, answer);
      } catch (error) {
        ended();
        throw error;
      }
    };
    Object.defineProperty(env, 'startWriting', { value: startWriting, configurable: true, writable: true });
  }
  return {
    started: () => started,
    running: () => running,
    idle: () =>
      running === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            waiting.push(resolve);
          }),
  };
}
