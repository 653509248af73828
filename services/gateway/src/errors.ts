// The gateway's errors, each a typed class that knows its HTTP status, its response body and whether the
// client may retry; toErrorResponse maps them (and Fastify's own errors) to the response in one place.
// Internal details go to the log, never into a response.

export abstract class IngestError extends Error {
  abstract readonly statusCode: number;
  /** Whether the same request may succeed later (the SDKs retry these). */
  readonly retryable: boolean = false;
  /** Seconds after which a retry may succeed (sent as Retry-After). */
  readonly retryAfterSeconds?: number;
  /** The response body: `{ message }` for input problems, `{ error }` for the spec's auth and limit errors. */
  abstract body(): Record<string, string>;
}

/** 400: the body is not a valid record (the spec's `{ "message": "<validation message>" }`). */
export class BadRequestError extends IngestError {
  readonly statusCode = 400;
  body() {
    return { message: this.message };
  }
}

export class PayloadTooLargeError extends IngestError {
  readonly statusCode = 413;
  body() {
    return { message: this.message };
  }
}

export class UnsupportedMediaTypeError extends IngestError {
  readonly statusCode = 415;
  body() {
    return { message: this.message };
  }
}

export class MissingTokenError extends IngestError {
  readonly statusCode = 401;
  constructor() {
    super('Missing API token');
  }
  body() {
    return { error: 'Missing API token' };
  }
}

/** 401 for a malformed, unknown or revoked token: the three are not told apart, so tokens cannot be probed. */
export class InvalidTokenError extends IngestError {
  readonly statusCode = 401;
  constructor() {
    super('Invalid API token');
  }
  body() {
    return { error: 'Invalid API token' };
  }
}

export class SecretTokenRequiredError extends IngestError {
  readonly statusCode = 403;
  constructor() {
    super('Revenue events require secret token');
  }
  body() {
    return { error: 'Revenue events require secret token' };
  }
}

export class RateLimitedError extends IngestError {
  readonly statusCode = 429;
  override readonly retryable = true;
  constructor() {
    super('Rate limited'); // Retry-After is set by the rate limiter, which knows the window
  }
  body() {
    return { error: 'Rate limited' };
  }
}

/** 503: the record could not be made durable in time. Never a 202 for a record that could be lost. */
export class ServiceUnavailableError extends IngestError {
  readonly statusCode = 503;
  override readonly retryable = true;
  override readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, options?: { cause?: unknown }) {
    super('Service temporarily unavailable', options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
  body() {
    return { error: 'Service temporarily unavailable, retry later' };
  }
}

export class NotFoundError extends IngestError {
  readonly statusCode = 404;
  body() {
    return { message: this.message };
  }
}

/** Any other 4xx that Fastify raises before the route runs (a malformed request line or header, …). */
class ClientError extends IngestError {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
  body() {
    return { message: this.message };
  }
}

class InternalError extends IngestError {
  readonly statusCode = 500;
  body() {
    return { error: 'Internal server error' };
  }
}

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
}

/** Maps any error thrown while handling a request to the IngestError that describes the response. */
export function toIngestError(error: unknown, bodyLimit: number): IngestError {
  if (error instanceof IngestError) return error;
  const e = (error ?? {}) as FastifyLikeError;
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError(`body is larger than the limit of ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError(
        'Content-Type must be application/json or text/plain (with the JSON envelope as the body)',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new BadRequestError('Content-Length does not match the body');
  }
  if (/forbidden prototype property/i.test(e.message ?? '')) {
    return new BadRequestError('body must not contain "__proto__" or "constructor.prototype" keys');
  }
  if (e.statusCode === 400 || error instanceof SyntaxError)
    return new BadRequestError('body is not valid JSON');
  if (e.statusCode && e.statusCode > 400 && e.statusCode < 500) {
    return new ClientError(e.statusCode, e.message ?? 'request rejected');
  }
  return new InternalError('internal error', { cause: error });
}
