// Runs gateway-worker in a worker thread and gives the parent what it needs of it: its URL, its
// metrics and health (for the admin server the parent serves), a close that drains it, and a promise that
// rejects if the thread fails or ends on its own.
import { Worker } from 'node:worker_threads';
import type { TallyConfig } from '@tally/config';
import type { Health, MetricsJson } from '@tally/service';

export interface GatewayThread {
  url: string;
  /** The gateway's metrics, as its registry's JSON. */
  metrics(): Promise<MetricsJson>;
  /** The health of the gateway's record log. */
  health(): Promise<Health>;
  /** Rejects if the gateway thread fails or exits unasked. */
  readonly failed: Promise<never>;
  /** Stops accepting, finishes in-flight requests, closes the gateway's log, and ends the thread. */
  close(): Promise<void>;
}

type WorkerMessage =
  | { type: 'listening'; url: string }
  | { type: 'closed' }
  | { type: 'failed'; message: string; stack?: string; code?: string; port?: number; address?: string }
  | { type: 'answer'; id: number; value: unknown };

function asError(message: {
  message: string;
  stack?: string;
  code?: string;
  port?: number;
  address?: string;
}): Error {
  const error = Object.assign(new Error(message.message), {
    ...(message.code && { code: message.code }),
    ...(message.port !== undefined && { port: message.port }),
    ...(message.address && { address: message.address }),
  });
  if (message.stack) error.stack = message.stack;
  return error;
}

/**
 * The thread, from the compiled dist/ (npm start, the image) or from the TypeScript sources (tests, tsx).
 * Compiled, it runs gateway-worker.js as it is. From the sources, gateway-worker.mjs registers tsx in the
 * thread first (Node 20 does not give a worker the parent's `--import` hooks), and the thread gets the export
 * condition that resolves the workspace packages to their sources, as the parent process does.
 */
function workerOf(config: TallyConfig): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./gateway-worker.js', import.meta.url), { workerData: config });
  }
  return new Worker(new URL('./gateway-worker.mjs', import.meta.url), {
    workerData: config,
    execArgv: [...process.execArgv, '--conditions=@tally/source'],
  });
}

export async function startGatewayThread(config: TallyConfig): Promise<GatewayThread> {
  const worker = workerOf(config);
  let closing = false;
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {}); // observed by the caller
  let listen: (address: { url: string }) => void = () => {};
  let refuse: (error: Error) => void = () => {};
  const listening = new Promise<{ url: string }>((resolve, reject) => {
    listen = resolve;
    refuse = reject;
  });
  // Settles when the thread has closed the gateway (or failed to), or has ended.
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });

  // Questions to the thread, answered by id.
  let nextId = 0;
  const waiting = new Map<number, (value: unknown) => void>();
  const ask = <T>(type: 'metrics' | 'health'): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, resolve as (value: unknown) => void);
      try {
        worker.postMessage({ type, id });
      } catch (error) {
        waiting.delete(id);
        reject(error);
      }
    });

  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'listening') return listen(message);
    if (message.type === 'answer') {
      waiting.get(message.id)?.(message.value);
      waiting.delete(message.id);
      return;
    }
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
    for (const answer of waiting.values()) answer(null); // no answer will come
    waiting.clear();
    const error = new Error(`the gateway thread exited (code ${code})`);
    refuse(error);
    if (!closing) fail(error);
    settle();
  });

  let address: { url: string };
  try {
    address = await listening;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  let closed: Promise<void> | null = null;
  return {
    url: address.url,
    metrics: async () => (await ask<MetricsJson | null>('metrics').catch(() => null)) ?? [],
    health: async () =>
      closing
        ? { ok: false, detail: 'shutting down' }
        : ((await ask<Health | null>('health').catch(() => null)) ?? {
            ok: false,
            detail: 'the gateway thread ended',
          }),
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
