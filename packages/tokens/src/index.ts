// @tally/tokens: API tokens (token.ts), their two stores (a JSON file in the data directory, or Redis),
// the one opener that picks between them (open.ts), the process's Redis connection (redis-connection.ts)
// and the verifier the gateway checks them with.
export { FileTokenStore } from './file-store.ts';
export * from './open.ts';
export * from './redis-connection.ts';
export { RedisTokenStore } from './redis-store.ts';
export * from './token.ts';
export * from './verifier.ts';
