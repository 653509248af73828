// @tally/service: what every Tally process shares: the admin server, the runner of its main.ts, what a
// start opened and its one close (resources.ts), the base of the services' error tables
// (service-errors.ts), the handling of lmdb-js's failed commits (lmdb-commit-failures.ts), and the metric
// of the record log's settings.
export * from './admin.ts';
export * from './lmdb-commit-failures.ts';
export * from './log-settings-metric.ts';
export * from './resources.ts';
export * from './runner.ts';
export * from './service-errors.ts';
