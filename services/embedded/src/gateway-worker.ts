// The gateway of `npm start` in a worker thread of its own: the HTTP server, validation and the durable
// append get an event loop (and so a core) to themselves, while the main thread runs the consumers, the
// warehouse and the admin server. The worker opens its own record log as the writer; the consumers read
// the same log through another instance (the embedded log is shared by LMDB across threads; Kafka is Kafka).
// Messages to the parent: { type: 'listening', url }, { type: 'closed' } once the gateway has drained and
// closed after the parent's 'close', { type: 'failed', message, stack }, and the answers to the parent's
// { type: 'metrics' | 'health', id } questions ({ type: 'answer', id, value }).
import { parentPort, workerData } from 'node:worker_threads';
import type { TallyConfig } from '@tally/config';
import { startGateway } from '@tally/gateway';

const port = parentPort;
if (!port) throw new Error('gateway-worker.ts runs only as a worker thread');

type Question = { type: 'metrics' | 'health'; id: number };

try {
  const gateway = await startGateway(workerData as TallyConfig, { admin: false });
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
