// Keeps a failed LMDB commit (the disk full: lmdb-js reports EIO or ENOSPC, or MDB_MAP_FULL) from ending
// the process. When a commit fails, lmdb-js rejects each write's promise with "Commit failed" and the cause
// in `error.commitError`, a second promise that only a caller who looks at it handles; and it rejects a
// promise that no caller holds at all: the one it makes for the start of each event-turn batch of writes
// (write.js, `writeBatchStart`), as it makes one for each write. Node ends a process (or a worker thread)
// on an unhandled rejection, so a full disk stopped the gateway, the consumers and the dashboard together,
// although every write that failed had been reported to its caller (the record log's append answered
// 503). This listener takes those rejections as handled: a "Commit failed" error carrying `commitError`
// (and its cause with it), and a cause rejected alone (an error lmdb-js's write path made, with its
// errno as `code`). Any other unhandled rejection is thrown again, as Node's default would, and ends the
// process as before.

const COMMIT_FAILED = 'Commit failed (see commitError for details)';
/** Where lmdb-js makes the error of a failed commit (its ES module, or its CommonJS bundle). */
const LMDB_WRITE_PATH = /[\\/]lmdb[\\/](?:write\.js|dist[\\/]index\.cjs):/;

/** Whether `reason` is lmdb-js's rejection of a failed commit (its cause is in `commitError`). */
export function isLmdbCommitFailure(
  reason: unknown,
): reason is Error & { commitError: PromiseLike<unknown> } {
  return (
    reason instanceof Error &&
    reason.message === COMMIT_FAILED &&
    typeof (reason as { commitError?: { then?: unknown } }).commitError?.then === 'function'
  );
}

/** Whether `reason` is the cause of a failed commit, as lmdb-js's write path makes it. */
export function isLmdbCommitCause(reason: unknown): boolean {
  return (
    reason instanceof Error &&
    typeof (reason as { code?: unknown }).code === 'number' &&
    LMDB_WRITE_PATH.test(reason.stack ?? '')
  );
}

let installed = false;

/**
 * Installs, once per thread, the listener that lets lmdb-js's orphan commit rejections pass (see above).
 * `onIgnored` hears each, for a log line.
 */
export function tolerateLmdbCommitFailures(onIgnored?: (error: Error) => void): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    if (isLmdbCommitFailure(reason)) {
      // Its cause, should it be rejected later, is handled with it (one rejected in the same turn is
      // reported on its own: the next branch).
      Promise.resolve(reason.commitError).catch(() => {});
    } else if (!isLmdbCommitCause(reason)) {
      throw reason;
    }
    onIgnored?.(reason as Error);
  });
}
