// @tally/gateway: the ingest gateway as a library (buildGateway, startGateway) for main.ts and tests.
export { landingBehindFlag } from './admission.ts';
export * from './errors.ts';
export * from './gateway.ts';
export * from './gateway-service.ts';
export * from './gateway-threads.ts';
export * from './ingest-route.ts';
export * from './metrics.ts';
export * from './runtime.ts';
export * from './visitor-id.ts';
