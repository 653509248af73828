// @tally/service: what every Tally process shares: the admin server and the runner of its main.ts.
export * from './admin.ts';
export * from './runner.ts';
