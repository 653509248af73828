import { describe, expect, it } from 'vitest';
import { backoffDelay, isRetryableStatus, retryAfterMs } from './backoff.ts';

describe('backoffDelay', () => {
  it('doubles with each attempt, half fixed and half jittered', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, 1000, 0))).toEqual([500, 1000, 2000, 4000]);
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, 1000, 0.999999))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(2, 1000, 0.5)).toBe(1500);
  });

  it('stays within [ceiling/2, ceiling] for any random number', () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ceiling = Math.min(30_000, 200 * 2 ** (attempt - 1));
      for (const random of [0, 0.1, 0.5, 0.9, 0.999]) {
        const delay = backoffDelay(attempt, 200, random);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('is capped by max', () => {
    expect(backoffDelay(30, 1000, 0.999999)).toBe(30_000);
    expect(backoffDelay(30, 1000, 0, 4000)).toBe(2000);
  });

  it('treats attempt 0 like attempt 1', () => {
    expect(backoffDelay(0, 1000, 0)).toBe(backoffDelay(1, 1000, 0));
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');

  it('reads delta-seconds', () => {
    expect(retryAfterMs('3600', now)).toBe(3_600_000);
    expect(retryAfterMs('0', now)).toBe(0);
    expect(retryAfterMs(' 5 ', now)).toBe(5000);
  });

  it('reads an HTTP date relative to now', () => {
    expect(retryAfterMs('Sun, 01 Mar 2026 12:00:30 GMT', now)).toBe(30_000);
  });

  it('gives undefined when absent, unreadable or in the past', () => {
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('', now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-5', now)).toBeUndefined();
    expect(retryAfterMs('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBeUndefined();
  });
});

describe('isRetryableStatus', () => {
  it('retries 429 and 5xx, never another 4xx', () => {
    expect([429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 413, 415, 422].some(isRetryableStatus)).toBe(false);
  });
});
