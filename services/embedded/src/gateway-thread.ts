// Runs gateway-worker.ts in a worker thread and gives the parent what it needs of it: its URLs, a close
// that drains it, and a promise that rejects if the thread fails or ends on its own.
import { Worker } from 'node:worker_threads';
import type { TallyConfig } from '@tally/config';

export interface GatewayThread {
  url: string;
  adminUrl: string;
  /** Rejects if the gateway thread fails or exits unasked. */
  readonly failed: Promise<never>;
  /** Stops accepting, finishes in-flight requests, closes the gateway's log, and ends the thread. */
  close(): Promise<void>;
}

type WorkerMessage =
  | { type: 'listening'; url: string; adminUrl: string }
  | { type: 'closed' }
  | { type: 'failed'; message: string; stack?: string };

function asError(message: { message: string; stack?: string }): Error {
  const error = new Error(message.message);
  if (message.stack) error.stack = message.stack;
  return error;
}

export async function startGatewayThread(config: TallyConfig): Promise<GatewayThread> {
  const worker = new Worker(new URL('./gateway-worker.mjs', import.meta.url), { workerData: config });
  let closing = false;
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {}); // observed by the caller
  let listen: (address: { url: string; adminUrl: string }) => void = () => {};
  let refuse: (error: Error) => void = () => {};
  const listening = new Promise<{ url: string; adminUrl: string }>((resolve, reject) => {
    listen = resolve;
    refuse = reject;
  });
  // Settles when the thread has closed the gateway (or failed to), or has ended.
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });

  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'listening') return listen(message);
    if (message.type === 'failed') {
      refuse(asError(message));
      fail(asError(message));
    }
    settle(); // 'closed', or 'failed' (at start, or while closing)
  });
  worker.on('error', (error) => {
    refuse(error);
    fail(error);
  });
  worker.on('exit', (code) => {
    const error = new Error(`the gateway thread exited (code ${code})`);
    refuse(error);
    if (!closing) fail(error);
    settle();
  });

  let address: { url: string; adminUrl: string };
  try {
    address = await listening;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  let closed: Promise<void> | null = null;
  return {
    ...address,
    failed,
    close() {
      closed ??= (async () => {
        closing = true;
        try {
          worker.postMessage('close');
        } catch {
          // the thread has ended already: then it is settled
        }
        await settled;
        // Everything is closed in the thread; end it even if a handle would keep its loop alive.
        await worker.terminate();
      })();
      return closed;
    },
  };
}
