// The errors the revenue client throws. Each says whether trying again later may succeed (`retryable`), so
// a caller such as a webhook handler can answer its payment processor 5xx (deliver again later) or 2xx
// (never will succeed; log it) without parsing messages.

export abstract class TallyError extends Error {
  abstract readonly retryable: boolean;
  /** The HTTP status Tally answered, when it answered. */
  readonly status: number | undefined = undefined;
}

/** The payload breaks the contract; thrown before any request is made. */
export class RevenueValidationError extends TallyError {
  readonly retryable = false;
  /** Path of the offending field ("customer_id", "metadata.plan"…). */
  readonly field: string;
  constructor(message: string) {
    super(`invalid revenue record: ${message}`);
    this.name = 'RevenueValidationError';
    this.field = message.split(' ')[0] ?? '';
  }
}

/** Tally answered with an error status. 429 and 5xx are retryable; 400, 401, 403, 413 and the like are not. */
export class TallyHttpError extends TallyError {
  override readonly status: number;
  readonly retryable: boolean;
  /** The server's own message (`message` or `error` of its JSON body). */
  readonly serverMessage: string;
  /** The server's Retry-After in ms, when it sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(status: number, serverMessage: string, retryAfterMs?: number) {
    super(`Tally answered ${status}: ${serverMessage}`);
    this.name = 'TallyHttpError';
    this.status = status;
    this.serverMessage = serverMessage;
    this.retryAfterMs = retryAfterMs;
    this.retryable = status === 429 || status >= 500;
  }
}

/** No answer: connection refused or reset, DNS failure, or the caller's signal aborted. */
export class TallyNetworkError extends TallyError {
  readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TallyNetworkError';
  }
}

/** No answer within the client's `timeout`. The record may still have landed: a retry keeps its id. */
export class TallyTimeoutError extends TallyNetworkError {
  constructor(timeoutMs: number) {
    super(`Tally did not answer within ${timeoutMs} ms`);
    this.name = 'TallyTimeoutError';
  }
}
