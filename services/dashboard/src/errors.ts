// The dashboard's errors, each a class that knows its status and body, and the one place (toDashboardError)
// where anything a request can raise becomes one of them: ours, the queries' (a bad filter, range or
// sort), the stores', Fastify's (validation, routing, body), the warehouse's. Bodies follow the gateway's
// convention: `{ message }` for input problems, `{ error }` for credentials, limits and availability.
// Messages are fixed texts: internal details go to the log, never into a response.

import { UserError } from '@tally/dashboard-store';
import { RevenueQueryError } from '@tally/reports/revenue';
import { BreakdownError, FilterSyntaxError, TrafficRangeError } from '@tally/reports/traffic';
import { WarehouseError } from '@tally/warehouse';

export abstract class DashboardError extends Error {
  abstract readonly statusCode: number;
  readonly retryAfterSeconds?: number;
  abstract body(): Record<string, string>;
}

class MessageError extends DashboardError {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
  body() {
    return { message: this.message };
  }
}

class ErrorBodyError extends DashboardError {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
  body() {
    return { error: this.message };
  }
}

export class BadRequestError extends MessageError {
  constructor(message: string) {
    super(400, message);
  }
}
export class NotFoundError extends MessageError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}
export class UnauthorizedError extends ErrorBodyError {
  constructor(message = 'Unauthorized') {
    super(401, message);
  }
}
export class ForbiddenError extends ErrorBodyError {
  constructor(message = 'Forbidden') {
    super(403, message);
  }
}
export class CrossSiteError extends ErrorBodyError {
  constructor() {
    super(403, 'Cross-site request refused');
  }
}
export class TooManyAttemptsError extends ErrorBodyError {
  override readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(429, 'Too many attempts');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
export class UnavailableError extends ErrorBodyError {
  override readonly retryAfterSeconds = 5;
  constructor() {
    super(503, 'The warehouse is unavailable; retry shortly');
  }
}
export class InternalError extends ErrorBodyError {
  constructor() {
    super(500, 'Internal error');
  }
}

/** Fastify's own errors by code, with fixed messages (its texts may quote the request). */
function fastifyError(error: {
  code?: string;
  statusCode?: number;
  validation?: unknown[];
  validationContext?: string;
}) {
  if (error.validation) {
    const first = error.validation[0] as
      | { instancePath?: string; message?: string; params?: { missingProperty?: string } }
      | undefined;
    const where = error.validationContext ?? 'request';
    const field =
      first?.params?.missingProperty ?? first?.instancePath?.replace(/^\//, '').replace(/\//g, '.') ?? '';
    const required = first?.params?.missingProperty !== undefined;
    // Ajv's message names the rule broken (pattern, type, enum), never the value sent.
    return new BadRequestError(
      `${where}${field ? `.${field}` : ''} ${required ? 'is required' : (first?.message ?? 'is invalid')}`,
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new MessageError(415, 'Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new BadRequestError('the body must be a JSON object');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new MessageError(413, 'the body is too large');
    case 'FST_ERR_RATE_LIMIT_EXCEEDED':
      return new TooManyAttemptsError(900);
  }
  if (error.statusCode === 429) return new TooManyAttemptsError(900);
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
    return new BadRequestError('invalid request');
  return null;
}

/** Whatever a request raised, as the error to answer with. */
export function toDashboardError(error: unknown): DashboardError {
  if (error instanceof DashboardError) return error;
  if (
    error instanceof FilterSyntaxError ||
    error instanceof TrafficRangeError ||
    error instanceof BreakdownError ||
    error instanceof RevenueQueryError
  ) {
    return new BadRequestError(error.message);
  }
  if (error instanceof UserError) return new BadRequestError(error.message);
  if (error instanceof WarehouseError && error.retryable) return new UnavailableError();
  const mapped = fastifyError((error ?? {}) as Parameters<typeof fastifyError>[0]);
  return mapped ?? new InternalError();
}
