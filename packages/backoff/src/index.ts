// @tally/backoff: the retry timing Tally's clients share, the browser tracker (@tally/core), the revenue
// client (@tally/revenue) and the servers' own retries (the warehouse's, the consumers' batch loop). A
// package of its own so that a server depends on neither the browser tracker nor an SDK for it. Only
// re-exports.
export * from './backoff.ts';
