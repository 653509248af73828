// @tally/embedded: the all-in-one runtime (startTally) for main.ts and end-to-end tests.
export * from './runtime.ts';
