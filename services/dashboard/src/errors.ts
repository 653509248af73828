// The dashboard's errors as data: DASHBOARD_ERRORS, one row per answer (status and body), on
// @tally/service's ServiceError, and the one place (toDashboardError) where anything a request can raise
// becomes one of them: ours, the queries' (a bad filter, range or sort), the stores', Fastify's
// (validation, routing, body), the warehouse's. Bodies follow the gateway's convention: `{ message }` for
// input problems, `{ error }` for credentials, limits and availability. Messages are fixed texts:
// internal details go to the log, never into a response.

import { RevenueQueryError } from '@tally/reports/revenue';
import { BreakdownError, FilterSyntaxError, TrafficRangeError } from '@tally/reports/traffic';
import { type ErrorTable, ServiceError, serviceErrors } from '@tally/service';
import { UserError } from '@tally/state-store';
import { WarehouseError } from '@tally/warehouse';
import { AlertRuleError } from './alerts/rules.ts';

/** Every answer of the dashboard to an error, by kind: status and body (schemas/openapi-dashboard.yaml). */
export const DASHBOARD_ERRORS = {
  bad_request: { status: 400, key: 'message' },
  not_found: { status: 404, key: 'message', message: 'Not found' },
  unauthorized: { status: 401, key: 'error', message: 'Unauthorized' },
  forbidden: { status: 403, key: 'error', message: 'Forbidden' },
  cross_site: { status: 403, key: 'error', text: 'Cross-site request refused' },
  /** 429 with the wait the attempt limit imposes (the error's retryAfterSeconds). */
  too_many_attempts: { status: 429, key: 'error', text: 'Too many attempts' },
  unavailable: {
    status: 503,
    key: 'error',
    text: 'The warehouse is unavailable; retry shortly',
    retryable: true,
    retryAfterSeconds: 5,
  },
  internal: { status: 500, key: 'error', text: 'Internal error' },
  unsupported_media_type: { status: 415, key: 'message', text: 'Content-Type must be application/json' },
  payload_too_large: { status: 413, key: 'message', text: 'the body is too large' },
} as const satisfies ErrorTable<string>;

export type DashboardErrorKind = keyof typeof DASHBOARD_ERRORS;

/** An error the dashboard answers with: a row of DASHBOARD_ERRORS. */
export type DashboardError = ServiceError<DashboardErrorKind>;

const dashboardErrors = serviceErrors(DASHBOARD_ERRORS);

/** An error of `kind`, with the message its body carries where the row has no fixed text. */
export const dashboardError = dashboardErrors.error;

/** A constructor of one row's errors (`new NotFoundError('no such goal')`), for the names the routes use. */
function errorsOf(kind: DashboardErrorKind): new (message?: string) => DashboardError {
  return class extends ServiceError<DashboardErrorKind> {
    constructor(message?: string) {
      super(DASHBOARD_ERRORS, kind, message);
    }
  };
}

// The names the routes and the access checks throw with, each a row of the table.
export const BadRequestError = errorsOf('bad_request');
export const NotFoundError = errorsOf('not_found');
export const UnauthorizedError = errorsOf('unauthorized');
export const ForbiddenError = errorsOf('forbidden');
export const CrossSiteError = errorsOf('cross_site');
export class TooManyAttemptsError extends ServiceError<DashboardErrorKind> {
  constructor(retryAfterSeconds: number) {
    super(DASHBOARD_ERRORS, 'too_many_attempts', undefined, { retryAfterSeconds });
  }
}

/** Fastify's own errors by code, with fixed messages (its texts may quote the request). */
function fastifyError(error: {
  code?: string;
  statusCode?: number;
  validation?: unknown[];
  validationContext?: string;
}): DashboardError | null {
  if (error.validation) {
    const first = error.validation[0] as
      | { instancePath?: string; message?: string; params?: { missingProperty?: string } }
      | undefined;
    const where = error.validationContext ?? 'request';
    const field =
      first?.params?.missingProperty ?? first?.instancePath?.replace(/^\//, '').replace(/\//g, '.') ?? '';
    const required = first?.params?.missingProperty !== undefined;
    // Ajv's message names the rule broken (pattern, type, enum), never the value sent.
    return dashboardError(
      'bad_request',
      `${where}${field ? `.${field}` : ''} ${required ? 'is required' : (first?.message ?? 'is invalid')}`,
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return dashboardError('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return dashboardError('bad_request', 'the body must be a JSON object');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return dashboardError('payload_too_large');
    case 'FST_ERR_RATE_LIMIT_EXCEEDED':
      return dashboardError('too_many_attempts', undefined, { retryAfterSeconds: ATTEMPT_WINDOW_S });
  }
  if (error.statusCode === 429) {
    return dashboardError('too_many_attempts', undefined, { retryAfterSeconds: ATTEMPT_WINDOW_S });
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
    return dashboardError('bad_request', 'invalid request');
  return null;
}

/** The attempt limit's window in seconds, the wait of a 429 that does not say its own. */
const ATTEMPT_WINDOW_S = 900;

/** Whatever a request raised, as the error to answer with. */
export function toDashboardError(error: unknown): DashboardError {
  if (dashboardErrors.owns(error)) return error;
  if (
    error instanceof FilterSyntaxError ||
    error instanceof TrafficRangeError ||
    error instanceof BreakdownError ||
    error instanceof RevenueQueryError
  ) {
    return dashboardError('bad_request', error.message);
  }
  if (error instanceof UserError || error instanceof AlertRuleError)
    return dashboardError('bad_request', error.message);
  if (error instanceof WarehouseError && error.retryable) return dashboardError('unavailable');
  const mapped = fastifyError((error ?? {}) as Parameters<typeof fastifyError>[0]);
  return mapped ?? dashboardError('internal');
}
