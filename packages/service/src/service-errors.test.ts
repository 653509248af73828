import { describe, expect, it } from 'vitest';
import { type ErrorTable, ServiceError, serviceErrors } from './service-errors.ts';

const TABLE = {
  bad_request: { status: 400, key: 'message' },
  missing_token: { status: 401, key: 'error', text: 'Missing API token' },
  unavailable: {
    status: 503,
    key: 'error',
    message: 'Service temporarily unavailable',
    text: 'Service temporarily unavailable, retry later',
    retryable: true,
    retryAfterSeconds: 5,
  },
  method_not_allowed: {
    status: 405,
    key: 'message',
    message: 'use POST',
    headers: { allow: 'POST, OPTIONS' },
    closesConnection: true,
  },
  client_error: { status: 400, key: 'message' },
  too_many: { status: 429, key: 'error', text: 'Too many attempts' },
} as const satisfies ErrorTable<string>;

type Kind = keyof typeof TABLE;
const error = (kind: Kind, message?: string, options?: ConstructorParameters<typeof ServiceError>[3]) =>
  new ServiceError<Kind>(TABLE, kind, message, options);

describe('ServiceError', () => {
  it('answers with its row: status, body key and text, headers, retry', () => {
    const unavailable = error('unavailable', undefined, { cause: new Error('the log is away') });
    expect(unavailable).toMatchObject({
      kind: 'unavailable',
      statusCode: 503,
      retryable: true,
      retryAfterSeconds: 5,
      closesConnection: false,
      message: 'Service temporarily unavailable',
    });
    expect(unavailable.body()).toEqual({ error: 'Service temporarily unavailable, retry later' });
    expect((unavailable.cause as Error).message).toBe('the log is away'); // for the log, not the body
    const notAllowed = error('method_not_allowed');
    expect([
      notAllowed.statusCode,
      notAllowed.body(),
      notAllowed.headers(),
      notAllowed.closesConnection,
    ]).toEqual([405, { message: 'use POST' }, { allow: 'POST, OPTIONS' }, true]);
  });

  it("carries the service's own message where the row has no fixed text, and the row's text where it has one", () => {
    expect(error('bad_request', 'body is empty').body()).toEqual({ message: 'body is empty' });
    expect(error('missing_token').body()).toEqual({ error: 'Missing API token' });
    expect(error('missing_token', 'ignored in the body').body()).toEqual({ error: 'Missing API token' });
  });

  it('takes the status and the wait from the error where its row leaves them to it', () => {
    expect(error('client_error', 'URI Too Long', { status: 414 }).statusCode).toBe(414);
    expect(error('too_many', undefined, { retryAfterSeconds: 42 }).retryAfterSeconds).toBe(42);
    expect(error('too_many').retryAfterSeconds).toBeUndefined();
  });

  it('hands out a copy of its headers', () => {
    const answer = error('method_not_allowed');
    answer.headers().allow = 'GET';
    expect(answer.headers()).toEqual({ allow: 'POST, OPTIONS' });
  });
});

describe('serviceErrors', () => {
  it("makes a table's errors, and owns them only: another service's error with the same kind is still to be mapped", () => {
    const ours = serviceErrors(TABLE);
    const theirs = serviceErrors({ bad_request: { status: 400, key: 'error' } } as const);
    const error = ours.error('bad_request', 'body is empty');
    expect([error.statusCode, error.body()]).toEqual([400, { message: 'body is empty' }]);
    expect(ours.owns(error)).toBe(true);
    expect(theirs.owns(error)).toBe(false);
    expect(ours.owns(new Error('bad_request'))).toBe(false);
  });
});
