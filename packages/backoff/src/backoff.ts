// Retry timing shared by Tally's clients and its own services: exponential backoff with jitter (the browser
// tracker, the revenue client, the consumers' batch loop and the warehouse's withRetry), Retry-After parsing
// (the tracker and the revenue client) and which statuses the tracker retries (the revenue client applies
// the same rule in its errors.ts). Pure functions (the random number and the current time are arguments) so
// that they are unit-tested exactly and cost a few bytes in the tracker's bundle. A package of its own
// (`@tally/backoff`, with a CommonJS copy for @tally/revenue on Node 18), so that servers need not depend on
// the browser tracker for it.

/**
 * Delay in ms before retry number `attempt` (1 = the first retry): `base`·2^(attempt−1), capped at `max`,
 * with "equal jitter": half of it fixed, half scaled by `random` (0 ≤ random < 1). The fixed half keeps the
 * delays growing; the random half keeps clients that failed together from retrying together.
 */
export function backoffDelay(attempt: number, base: number, random: number, max = 30_000): number {
  const ceiling = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return Math.round((ceiling * (1 + random)) / 2);
}

/**
 * A Retry-After header in ms: delta-seconds, or an HTTP date relative to `now`. Undefined when absent or
 * unreadable, so the caller falls back to its own backoff.
 */
export function retryAfterMs(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  // A date in the past (or an unreadable one) gives 0 or NaN, hence undefined: the caller's backoff applies.
  return seconds >= 0 ? seconds * 1000 : Math.max(0, Date.parse(value) - now) || undefined;
}

/**
 * Whether a response status is worth retrying: 429 (after Retry-After) and 5xx. Every other 4xx means the
 * request itself is wrong (bad payload, bad token, too large) and would fail the same way again.
 */
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500;
