// @tally/service: what every Tally process shares: the admin server, the runner of its main.ts, and the
// metric of the record log's settings.
export * from './admin.ts';
export * from './log-settings-metric.ts';
export * from './runner.ts';
