// The gateway's errors, each a typed class that knows its HTTP status, its response body, its extra headers
// and whether the client may retry. toIngestError maps anything thrown while handling a request (ours,
// Fastify's, Node's HTTP parser's, zlib's, the record log's) to one of them, and errorResponse turns one
// into the status, headers and body that every error answer on the public port is made of: Fastify's error
// handler and the raw answers to Node's client errors both use it. Messages are fixed texts: internal
// details go to the log, and no byte of the request is ever echoed back.
import { STATUS_CODES } from 'node:http';
import { LogUnavailableError } from '@tally/log';

/** Seconds a client is asked to wait after a 503. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/**
 * The CORS headers every response of the public port carries, errors included: any origin may send, and
 * may read Retry-After. @fastify/cors sets them on the responses it sees; errorResponse sets them on the
 * others (errors raised before its hook, and Node's own client errors).
 */
export const CORS_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'Retry-After',
};

export abstract class IngestError extends Error {
  abstract readonly statusCode: number;
  /** Whether the same request may succeed later (429, 503, 408): a retryable 5xx is logged as a warning. */
  readonly retryable: boolean = false;
  /** Seconds after which a retry may succeed (sent as Retry-After). */
  readonly retryAfterSeconds?: number;
  /** Whether the connection is closed after this answer, because what follows on it cannot be trusted. */
  readonly closesConnection: boolean = false;
  /** The response body: `{ message }` for input problems, `{ error }` for the spec's auth and limit errors. */
  abstract body(): Record<string, string>;
  /** Headers this answer needs besides the common ones (Allow on a 405). */
  headers(): Record<string, string> {
    return {};
  }
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
  constructor(bodyLimit: number) {
    super(`body is larger than the limit of ${bodyLimit} bytes`);
  }
  body() {
    return { message: this.message };
  }
}

export class UnsupportedMediaTypeError extends IngestError {
  readonly statusCode = 415;
  constructor() {
    super('Content-Type must be application/json or text/plain (with the JSON envelope as the body)');
  }
  body() {
    return { message: this.message };
  }
}

/** 415 for a Content-Encoding other than gzip: Accept-Encoding says what is accepted (RFC 9110, 12.5.3). */
export class UnsupportedContentEncodingError extends IngestError {
  readonly statusCode = 415;
  constructor() {
    super('Content-Encoding must be gzip (or x-gzip), or none (identity); no other encoding is accepted');
  }
  body() {
    return { message: this.message };
  }
  override headers() {
    return { 'accept-encoding': 'gzip' };
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

/**
 * 403 for a browser request (it has an Origin header) with a public token of a project that lists the
 * origins it may send from, and not this one; also a CORS preflight from an origin no project allows.
 * Only when the operator set allowed origins (`tally projects set --allowed-origins`): an addition to the
 * spec's responses.
 */
export class OriginNotAllowedError extends IngestError {
  readonly statusCode = 403;
  constructor() {
    super('Origin not allowed for this project');
  }
  body() {
    return { error: 'Origin not allowed for this project' };
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

/**
 * 503: the record could not be made durable in time, or the gateway is draining. Never a 202 for a record
 * that could be lost.
 */
export class ServiceUnavailableError extends IngestError {
  readonly statusCode = 503;
  override readonly retryable = true;
  override readonly retryAfterSeconds: number = UNAVAILABLE_RETRY_AFTER_S;
  constructor(options?: { cause?: unknown }) {
    super('Service temporarily unavailable', options);
  }
  body() {
    return { error: 'Service temporarily unavailable, retry later' };
  }
}

/**
 * 503 at once, before the request is read: the event loop has as many requests in flight, or as many
 * appends waiting for the log, as admission.ts allows. A short Retry-After: overload passes in moments.
 */
export class OverloadedError extends ServiceUnavailableError {
  override readonly retryAfterSeconds = OVERLOADED_RETRY_AFTER_S;
}

/** Seconds a client is asked to wait after a 503 of admission control. */
export const OVERLOADED_RETRY_AFTER_S = 1;

/**
 * 503 to a request through a trusted proxy whose client already has GATEWAY_MAX_CONNECTIONS_PER_IP requests
 * in progress (connection-caps.ts). The connection is closed after it: the request's body is not read.
 */
export class ClientOverCapError extends OverloadedError {
  override readonly closesConnection = true;
}

export class NotFoundError extends IngestError {
  readonly statusCode = 404;
  constructor() {
    super('not found; the only endpoint is POST /api/ingest');
  }
  body() {
    return { message: this.message };
  }
}

/** 405 for another method on /api/ingest. */
export class MethodNotAllowedError extends IngestError {
  readonly statusCode = 405;
  constructor() {
    super('this method is not allowed on /api/ingest; use POST');
  }
  body() {
    return { message: this.message };
  }
  override headers() {
    return { allow: 'POST, OPTIONS' };
  }
}

/** 400 for an OPTIONS request that is not a CORS preflight (no Origin or Access-Control-Request-Method). */
export class InvalidPreflightError extends IngestError {
  readonly statusCode = 400;
  constructor() {
    super('a CORS preflight needs the Origin and Access-Control-Request-Method headers');
  }
  body() {
    return { message: this.message };
  }
}

/** 400 for an HTTP/1.1 request without Host (RFC 9112, 3.2); the connection is closed, as Node would. */
export class MissingHostError extends IngestError {
  readonly statusCode = 400;
  override readonly closesConnection = true;
  constructor() {
    super('the Host header is required');
  }
  body() {
    return { message: this.message };
  }
}

/** 417 for an Expect header other than 100-continue (RFC 9110, 10.1.1). */
export class ExpectationFailedError extends IngestError {
  readonly statusCode = 417;
  constructor() {
    super('the only expectation supported is 100-continue');
  }
  body() {
    return { message: this.message };
  }
}

/** 408: the headers or the whole request did not arrive in time (Node's request and headers timeouts). */
export class RequestTimeoutError extends IngestError {
  readonly statusCode = 408;
  override readonly retryable = true;
  override readonly closesConnection = true;
  constructor() {
    super('Request timeout');
  }
  body() {
    return { error: 'Request timeout: the request did not arrive in time' };
  }
}

/** 431: the request's headers are larger than Node's limit (16 KB). */
export class HeadersTooLargeError extends IngestError {
  readonly statusCode = 431;
  override readonly closesConnection = true;
  constructor() {
    super('Request headers too large');
  }
  body() {
    return { error: 'Request header fields too large' };
  }
}

/** 400 from Node's HTTP parser: a malformed request line, header or chunk. What follows cannot be framed. */
export class MalformedRequestError extends IngestError {
  readonly statusCode = 400;
  override readonly closesConnection = true;
  constructor() {
    super('malformed HTTP request');
  }
  body() {
    return { message: this.message };
  }
}

/** Any other 4xx that Fastify raises before the route runs: a fixed text per status, never its message. */
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

interface CodedError {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
}

/** Messages for the Fastify errors a request can cause, by code: Fastify's own messages quote the request. */
const FASTIFY_ERRORS: Record<string, (bodyLimit: number) => IngestError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (limit) => new PayloadTooLargeError(limit),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new UnsupportedMediaTypeError(),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new BadRequestError('Content-Length does not match the body'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new BadRequestError('body is empty'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new BadRequestError('body is not valid JSON'),
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: () => new BadRequestError('Content-Type is required'),
  FST_ERR_BAD_URL: () => new BadRequestError('the URL is not valid'),
  FST_ERR_MAX_PARAM_LENGTH: () => new ClientError(414, 'the URL is too long'),
};

/** Maps any error thrown while handling a request to the IngestError that describes the response. */
export function toIngestError(error: unknown, bodyLimit: number): IngestError {
  if (error instanceof IngestError) return error;
  if (error instanceof LogUnavailableError) return new ServiceUnavailableError({ cause: error });
  const e = (error ?? {}) as CodedError;
  const code = typeof e.code === 'string' ? e.code : '';
  const fastifyError = FASTIFY_ERRORS[code];
  if (fastifyError) return fastifyError(bodyLimit);
  // zlib's errors while decoding a gzip body (Z_DATA_ERROR, Z_BUF_ERROR for a truncated stream, …).
  if (code.startsWith('Z_')) return new BadRequestError('body is not valid gzip');
  if (e.message === 'Object contains forbidden prototype property') {
    return new BadRequestError('body must not contain "__proto__" or "constructor.prototype" keys');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
  // Reading the body failed (the client went away, or sent less than it declared).
  if (status === 400) return new BadRequestError('the request body could not be read');
  if (status > 400 && status < 500) return new ClientError(status, STATUS_CODES[status] ?? 'request refused');
  return new InternalError('internal error', { cause: error });
}

/**
 * The answer to an error Node's HTTP server reports on a connection ('clientError'), or null when the
 * connection itself failed (reset, broken pipe) and no answer can be sent.
 */
export function toClientErrorAnswer(error: unknown): IngestError | null {
  const code = String((error as CodedError | null)?.code ?? '');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimeoutError();
  if (code === 'HPE_HEADER_OVERFLOW') return new HeadersTooLargeError();
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return new ClientError(413, 'chunk extensions too large');
  if (code.startsWith('HPE_')) return new MalformedRequestError();
  return null;
}

export interface ErrorResponse {
  statusCode: number;
  headers: Record<string, string>;
  /** The JSON body, serialised. */
  body: string;
}

/** The one place an error becomes a response: status, JSON body, CORS, Retry-After and its own headers. */
export function errorResponse(error: IngestError): ErrorResponse {
  const headers: Record<string, string> = {
    ...CORS_RESPONSE_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    ...error.headers(),
  };
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  if (error.closesConnection) headers.connection = 'close';
  return { statusCode: error.statusCode, headers, body: JSON.stringify(error.body()) };
}

/** An error response as raw HTTP/1.1 bytes, for a socket no response object is bound to. */
export function rawErrorResponse(error: IngestError): string {
  const { statusCode, headers, body } = errorResponse(error);
  const lines = [`HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? ''}`];
  for (const [name, value] of Object.entries({
    ...headers,
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  })) {
    lines.push(`${name}: ${value}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
