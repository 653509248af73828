// @tally/service: what every Tally process shares.
export * from './admin.ts';
