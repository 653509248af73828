// @tally/revenue-consumer: the revenue consumer as a library (main.ts runs it as a process; the
// all-in-one process of npm start runs it in-process).
export * from './consumer.ts';
export * from './rows.ts';
