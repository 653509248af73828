// The gateway's errors as data: INGEST_ERRORS, one row per answer (its HTTP status, its body, its extra
// headers, whether the client may retry), on @tally/service's ServiceError. toIngestError maps anything
// thrown while handling a request (ours, Fastify's, Node's HTTP parser's, zlib's, the record log's) to one
// of them, and errorResponse turns one into the status, headers and body that every error answer on the
// public port is made of: Fastify's error handler and the raw answers to Node's client errors both use it.
// Messages are fixed texts: internal details go to the log, and no byte of the request is ever echoed back.
import { STATUS_CODES } from 'node:http';
import { LogUnavailableError } from '@tally/log';
import { type ErrorTable, type ServiceError, serviceErrors } from '@tally/service';

/** Seconds a client is asked to wait after a 503. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Seconds a client is asked to wait after a 503 of admission control. */
export const OVERLOADED_RETRY_AFTER_S = 1;

/**
 * The CORS headers every response of the public port carries, errors included: any origin may send, and
 * may read Retry-After. @fastify/cors sets them on the responses it sees; errorResponse sets them on the
 * others (errors raised before its hook, and Node's own client errors).
 */
export const CORS_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'Retry-After',
};

/** The body of every 503: never a 202 for a record that could be lost, and the client may retry. */
const SERVICE_UNAVAILABLE = {
  status: 503,
  key: 'error',
  message: 'Service temporarily unavailable',
  text: 'Service temporarily unavailable, retry later',
  retryable: true,
} as const;

/**
 * Every answer of the public port to an error, by kind: status, body and headers. The README's response
 * table and schemas/openapi.yaml document them; the gateway's tests hold them to it.
 */
export const INGEST_ERRORS = {
  /** 400: the body is not a valid record (the spec's `{ "message": "<validation message>" }`). */
  bad_request: { status: 400, key: 'message' },
  payload_too_large: { status: 413, key: 'message' },
  unsupported_media_type: {
    status: 415,
    key: 'message',
    message: 'Content-Type must be application/json or text/plain (with the JSON envelope as the body)',
  },
  /** 415 for a Content-Encoding other than gzip: Accept-Encoding says what is accepted (RFC 9110, 12.5.3). */
  unsupported_content_encoding: {
    status: 415,
    key: 'message',
    message: 'Content-Encoding must be gzip (or x-gzip), or none (identity); no other encoding is accepted',
    headers: { 'accept-encoding': 'gzip' },
  },
  missing_token: { status: 401, key: 'error', text: 'Missing API token' },
  /** 401 for a malformed, unknown or revoked token: the three are not told apart, so tokens cannot be probed. */
  invalid_token: { status: 401, key: 'error', text: 'Invalid API token' },
  secret_token_required: { status: 403, key: 'error', text: 'Revenue events require secret token' },
  /**
   * 403 for a browser request (it has an Origin header) with a public token of a project that lists the
   * origins it may send from, and not this one; also a CORS preflight from an origin no project allows.
   * Only when the operator set allowed origins (`tally projects set --allowed-origins`): an addition to the
   * spec's responses.
   */
  origin_not_allowed: { status: 403, key: 'error', text: 'Origin not allowed for this project' },
  /** 429: Retry-After is set by the rate limiter, which knows the window. */
  rate_limited: { status: 429, key: 'error', text: 'Rate limited', retryable: true },
  /** 503: the record could not be made durable in time, or the gateway is draining. */
  unavailable: { ...SERVICE_UNAVAILABLE, retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S },
  /**
   * 503 at once, before the request is read: the event loop has as many requests in flight, or as many
   * appends waiting for the log, as admission.ts allows. A short Retry-After: overload passes in moments.
   */
  overloaded: { ...SERVICE_UNAVAILABLE, retryAfterSeconds: OVERLOADED_RETRY_AFTER_S },
  /**
   * 503 at once, before the request is read: the consumers of this process (npm start) are more than
   * GATEWAY_MAX_CONSUMER_LAG records behind (admission.ts). Catching up takes seconds, not moments.
   */
  landing_behind: { ...SERVICE_UNAVAILABLE, retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S },
  /**
   * 503 to a request through a trusted proxy whose client already has GATEWAY_MAX_CONNECTIONS_PER_IP
   * requests in progress (connection-caps.ts). The connection is closed after it: the body is not read.
   */
  client_over_cap: {
    ...SERVICE_UNAVAILABLE,
    retryAfterSeconds: OVERLOADED_RETRY_AFTER_S,
    closesConnection: true,
  },
  not_found: { status: 404, key: 'message', message: 'not found; the only endpoint is POST /api/ingest' },
  /** 405 for another method on /api/ingest. */
  method_not_allowed: {
    status: 405,
    key: 'message',
    message: 'this method is not allowed on /api/ingest; use POST',
    headers: { allow: 'POST, OPTIONS' },
  },
  /** 400 for an OPTIONS request that is not a CORS preflight (no Origin or Access-Control-Request-Method). */
  invalid_preflight: {
    status: 400,
    key: 'message',
    message: 'a CORS preflight needs the Origin and Access-Control-Request-Method headers',
  },
  /** 400 for an HTTP/1.1 request without Host (RFC 9112, 3.2); the connection is closed, as Node would. */
  missing_host: {
    status: 400,
    key: 'message',
    message: 'the Host header is required',
    closesConnection: true,
  },
  /** 417 for an Expect header other than 100-continue (RFC 9110, 10.1.1). */
  expectation_failed: {
    status: 417,
    key: 'message',
    message: 'the only expectation supported is 100-continue',
  },
  /** 408: the headers or the whole request did not arrive in time (Node's request and headers timeouts). */
  request_timeout: {
    status: 408,
    key: 'error',
    message: 'Request timeout',
    text: 'Request timeout: the request did not arrive in time',
    retryable: true,
    closesConnection: true,
  },
  /** 431: the request's headers are larger than Node's limit (16 KB). */
  headers_too_large: {
    status: 431,
    key: 'error',
    message: 'Request headers too large',
    text: 'Request header fields too large',
    closesConnection: true,
  },
  /** 400 from Node's HTTP parser: a malformed request line, header or chunk. What follows cannot be framed. */
  malformed_request: {
    status: 400,
    key: 'message',
    message: 'malformed HTTP request',
    closesConnection: true,
  },
  /** 414: a path parameter longer than Fastify takes. */
  url_too_long: { status: 414, key: 'message', message: 'the URL is too long' },
  /** 413 from Node's HTTP parser: a chunk's extensions beyond its limit. */
  chunk_extensions_too_large: { status: 413, key: 'message', message: 'chunk extensions too large' },
  /** Any other 4xx that Fastify raises before the route runs: its status, a fixed text per status. */
  client_error: { status: 400, key: 'message' },
  internal: { status: 500, key: 'error', message: 'internal error', text: 'Internal server error' },
} as const satisfies ErrorTable<string>;

export type IngestErrorKind = keyof typeof INGEST_ERRORS;

/** An error the public port answers with: a row of INGEST_ERRORS. */
export type IngestError = ServiceError<IngestErrorKind>;

const ingestErrors = serviceErrors(INGEST_ERRORS);

/** An error of `kind`: its message (the body's text where the row has none of its own), its cause for the log. */
export const ingestError = ingestErrors.error;

interface CodedError {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
}

/** A 413 naming the limit the body went over (decoded or not). */
export function payloadTooLarge(bodyLimit: number): IngestError {
  return ingestError('payload_too_large', `body is larger than the limit of ${bodyLimit} bytes`);
}

/** The answers to the Fastify errors a request can cause, by code: Fastify's own messages quote the request. */
const FASTIFY_ERRORS: Record<string, (bodyLimit: number) => IngestError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (limit) => payloadTooLarge(limit),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => ingestError('unsupported_media_type'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    ingestError('bad_request', 'Content-Length does not match the body'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => ingestError('bad_request', 'body is empty'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => ingestError('bad_request', 'body is not valid JSON'),
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: () => ingestError('bad_request', 'Content-Type is required'),
  FST_ERR_BAD_URL: () => ingestError('bad_request', 'the URL is not valid'),
  FST_ERR_MAX_PARAM_LENGTH: () => ingestError('url_too_long'),
};

/** Maps any error thrown while handling a request to the IngestError that describes the response. */
export function toIngestError(error: unknown, bodyLimit: number): IngestError {
  if (ingestErrors.owns(error)) return error;
  if (error instanceof LogUnavailableError) return ingestError('unavailable', undefined, { cause: error });
  const e = (error ?? {}) as CodedError;
  const code = typeof e.code === 'string' ? e.code : '';
  const fastifyError = FASTIFY_ERRORS[code];
  if (fastifyError) return fastifyError(bodyLimit);
  // zlib's errors while decoding a gzip body (Z_DATA_ERROR, Z_BUF_ERROR for a truncated stream, …).
  if (code.startsWith('Z_')) return ingestError('bad_request', 'body is not valid gzip');
  if (e.message === 'Object contains forbidden prototype property') {
    return ingestError('bad_request', 'body must not contain "__proto__" or "constructor.prototype" keys');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
  // Reading the body failed (the client went away, or sent less than it declared).
  if (status === 400) return ingestError('bad_request', 'the request body could not be read');
  if (status > 400 && status < 500) {
    return ingestError('client_error', STATUS_CODES[status] ?? 'request refused', { status });
  }
  return ingestError('internal', undefined, { cause: error });
}

/**
 * The answer to an error Node's HTTP server reports on a connection ('clientError'), or null when the
 * connection itself failed (reset, broken pipe) and no answer can be sent.
 */
export function toClientErrorAnswer(error: unknown): IngestError | null {
  const code = String((error as CodedError | null)?.code ?? '');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return ingestError('request_timeout');
  if (code === 'HPE_HEADER_OVERFLOW') return ingestError('headers_too_large');
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return ingestError('chunk_extensions_too_large');
  if (code.startsWith('HPE_')) return ingestError('malformed_request');
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
