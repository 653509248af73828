// @tally/dashboard: the dashboard service as a library (buildDashboard, startDashboard). Only re-exports.
export * from './dashboard.ts';
export * from './deps.ts';
export * from './runtime.ts';
