// withAppendTimeout: a record log whose appends fail with LogUnavailableError when the backend has not
// made the records durable in time. Cross-cutting, so it wraps any backend instead of living in each.
import { LogUnavailableError, type RecordLog } from './record-log.ts';

/**
 * Wraps a log so that append rejects with LogUnavailableError when the backend has not made the records
 * durable within `timeoutMs` (or fails). The backend may still finish the write later: the client, told
 * 503, retries, and consumers deduplicate by record id.
 */
export function withAppendTimeout(log: RecordLog, timeoutMs: number): RecordLog {
  return {
    consumer: (o) => log.consumer(o),
    deadLetters: log.deadLetters,
    health: () => log.health(),
    close: () => log.close(),
    append(records) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new LogUnavailableError(`record log did not confirm within ${timeoutMs} ms`)),
          timeoutMs,
        );
        Promise.resolve()
          .then(() => log.append(records))
          .then(
            () => {
              clearTimeout(timer);
              resolve();
            },
            (error: unknown) => {
              clearTimeout(timer);
              reject(
                error instanceof LogUnavailableError
                  ? error
                  : new LogUnavailableError('record log append failed', { cause: error }),
              );
            },
          );
      });
    },
  };
}
