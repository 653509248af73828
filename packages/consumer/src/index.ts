// @tally/consumer: the consumers' runtime (the batch loop, dead letters, the process), shared by the
// analytics and the revenue consumer.
export * from './batch-loop.ts';
export * from './consumer-process.ts';
export * from './failures.ts';
export * from './first-copies.ts';
export * from './lag-gate.ts';
export * from './logger.ts';
export * from './metrics.ts';
export * from './progress.ts';
export * from './start-backfill.ts';
export * from './string-map.ts';
export * from './warehouse-when-ready.ts';
