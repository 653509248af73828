// The embedded log's file pages across threads. lmdb-js maps an environment once per process, shared by
// every handle on its file in any thread, and unmaps it only when the last of them closes. `npm start`
// with one gateway loop holds two: the loop's thread is the log's writer, and the main thread reads the
// same file for the consumers. The writer's reopen (releasePagesEveryBytes) releases the pages only if the
// main thread's handle closes meanwhile, so the writer asks it to over a MessagePort: `suspend`, answered
// `suspended` once that handle is closed (its reads and commits wait), then `resume` once the writer's
// handle is open again. The writer waits at most SUSPEND_TIMEOUT_MS for the answer (its appends wait with
// it): past that it reopens alone, the pages stay mapped this time, and nothing else changes. Should the
// writer's thread end between the two, the port's closing resumes the handle.
import type { MessagePort } from 'node:worker_threads';
import type { EnvironmentSharer } from '../embedded/embedded-log.ts';

const SUSPEND_TIMEOUT_MS = 5_000;

type ReleaseRequest = 'suspend' | 'resume';
type ReleaseAnswer = 'suspended';

/** A handle that can close while another thread's writer reopens (EmbeddedRecordLog has these). */
export interface SuspendableLog {
  suspendEnvironment(): Promise<void>;
  resumeEnvironment(): void;
}

/** The writer's side: its sharer, the handle across the port. */
export function suspendThroughPort(port: MessagePort, timeoutMs = SUSPEND_TIMEOUT_MS): EnvironmentSharer {
  let answered: (() => void) | null = null;
  port.on('message', (answer: ReleaseAnswer) => {
    if (answer === 'suspended') answered?.();
  });
  port.unref(); // the thread ends when its work does, not when this port closes
  return {
    suspend: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          answered = null;
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        answered = done;
        port.postMessage('suspend' satisfies ReleaseRequest);
      }),
    resume: () => port.postMessage('resume' satisfies ReleaseRequest),
  };
}

/**
 * The other side: closes `log`'s handle when the writer across the port asks, and opens it again when told
 * (after it has closed, if the writer gave up waiting first).
 */
export function serveEnvironmentRelease(log: SuspendableLog, port: MessagePort): void {
  let suspended: Promise<void> = Promise.resolve();
  port.on('message', (request: ReleaseRequest) => {
    if (request === 'suspend') {
      suspended = log.suspendEnvironment().then(
        () => port.postMessage('suspended' satisfies ReleaseAnswer),
        () => {}, // it stays open: the writer reopens alone once its wait is over
      );
    } else {
      suspended.then(() => log.resumeEnvironment());
    }
  });
  // The writer's thread gone (ended, or failed) without a `resume`: the handle opens again all the same.
  port.on('close', () => {
    suspended.then(() => log.resumeEnvironment());
  });
  port.unref();
}
