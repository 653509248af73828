// @tally/contract: the wire contract of POST /api/ingest (schemas, types, validator, log record shape).
export * from './currencies.ts';
export * from './money.ts';
export * from './record.ts';
export * from './schemas.ts';
export * from './validate.ts';
