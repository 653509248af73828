// @tally/tokens: API tokens (token.ts), their two stores (a JSON file in the data directory, or Redis)
// and the verifier the gateway checks them with.
export { FileTokenStore } from './file-store.ts';
export { RedisTokenStore } from './redis-store.ts';
export * from './token.ts';
export * from './verifier.ts';
