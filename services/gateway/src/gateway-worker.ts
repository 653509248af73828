// One gateway event loop in a worker thread of its own (gateway-threads.ts starts it): the HTTP server,
// validation and the durable append get an event loop (and so a core) to themselves, while the main thread
// runs the admin server (and in `npm start` the consumers and the warehouse). It appends through the
// MessagePort it was given to the log its parent holds (the embedded log's one writer), or else opens its
// own record log: as the writer when it is the only gateway thread (in npm start, asking the main thread's
// handle on it to close while it reopens its own: releasePort), or its own Kafka producer.
// Messages to the parent: { type: 'listening', url }, { type: 'closed' } once the gateway has drained and
// closed after the parent's 'close', { type: 'failed', message, stack }, and the answers to the parent's
// { type: 'metrics' | 'health', id } questions ({ type: 'answer', id, value }).
import { parentPort, workerData } from 'node:worker_threads';
import { appendThroughPort, suspendThroughPort } from '@tally/log';
import { tolerateLmdbCommitFailures } from '@tally/service';
import type { GatewayWorkerData } from './gateway-threads.ts';
import { startGateway } from './runtime.ts';

const port = parentPort;
if (!port) throw new Error('gateway-worker.ts runs only as a worker thread');
// The thread may hold the embedded log's writer: a full disk fails its commits, not the thread.
tolerateLmdbCommitFailures();

type Question = { type: 'metrics' | 'health'; id: number };

try {
  const data = workerData as GatewayWorkerData;
  const gateway = await startGateway(data.config, {
    admin: false,
    worker: data.worker,
    reusePort: data.reusePort,
    loops: data.loops,
    checkLogSettings: data.checkLogSettings,
    ...(data.shared && { shared: data.shared }),
    ...(data.appendPort && { log: appendThroughPort(data.appendPort), ownsLog: true }),
    ...(data.releasePort && { logSharer: suspendThroughPort(data.releasePort) }),
  });
  port.on('message', (message: 'close' | Question) => {
    if (message === 'close') {
      gateway.close().then(
        () => port.postMessage({ type: 'closed' }),
        (error: unknown) =>
          port.postMessage({ type: 'failed', message: String(error), stack: (error as Error)?.stack }),
      );
      return;
    }
    const answer =
      message.type === 'metrics'
        ? gateway.metrics.registry.getMetricsAsJSON()
        : gateway.log.health().catch(() => ({ ok: false, detail: 'health check failed' }));
    answer.then((value) => port.postMessage({ type: 'answer', id: message.id, value }));
  });
  port.postMessage({ type: 'listening', url: gateway.url });
} catch (error) {
  // What the parent needs to tell a person what went wrong (a taken port: which one).
  const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
  port.postMessage({
    type: 'failed',
    message: e?.message ?? String(error),
    stack: e?.stack,
    code: e?.code,
    port: e?.port,
    address: e?.address,
  });
}
