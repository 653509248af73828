// The gateway of `npm start` in a worker thread of its own: the HTTP servers, validation and the durable
// append get an event loop (and so a core) to themselves, while the main thread runs the consumers and
// the warehouse. The worker opens its own record log as the writer; the consumers read the same log
// through another instance (the embedded log is shared by LMDB across threads; Kafka is Kafka).
// Messages: to the parent { type: 'listening', url, adminUrl }, { type: 'closed' } once the gateway has
// drained and closed after the parent's 'close', or { type: 'failed', message, stack }.
import { parentPort, workerData } from 'node:worker_threads';
import type { TallyConfig } from '@tally/config';
import { startGateway } from '@tally/gateway';

const port = parentPort;
if (!port) throw new Error('gateway-worker.ts runs only as a worker thread');

try {
  const gateway = await startGateway(workerData as TallyConfig);
  port.on('message', (message) => {
    if (message === 'close') {
      gateway.close().then(
        () => port.postMessage({ type: 'closed' }),
        (error: unknown) =>
          port.postMessage({ type: 'failed', message: String(error), stack: (error as Error)?.stack }),
      );
    }
  });
  port.postMessage({ type: 'listening', url: gateway.url, adminUrl: gateway.adminUrl });
} catch (error) {
  port.postMessage({
    type: 'failed',
    message: (error as Error)?.message ?? String(error),
    stack: (error as Error)?.stack,
  });
}
