// ClickHouse's HTTP interface over the embedded chDB warehouse, for analysts' tools and the tally CLI while
// a process holds the data directory. One concern per file: request.ts the protocol, compression.ts and
// cityhash.ts, statement.ts the statement scan, statement-policy.ts what each user may run (from the
// engine's parse), users.ts users and their limits, sessions.ts, executor.ts running a statement,
// server.ts where they meet, endpoint.ts the endpoint and credentials a running process publishes. This
// file only re-exports: the endpoint file and the users' limits load no engine, and the server (chDB,
// lz4-napi, fzstd) is loaded by serveClickHouseHttp on its first call (serve.ts).
export {
  type Credentials,
  endpointFile,
  endpointUrl,
  type PublishedEndpoint,
  publishEndpoint,
  readPublishedEndpoint,
  unpublishEndpoint,
  warehouseCredentials,
} from './endpoint.ts';
export { reachWarehouse } from './reach.ts';
export { serveClickHouseHttp } from './serve.ts';
export type { ClickHouseHttpInterface, ClickHouseHttpInterfaceOptions } from './server.ts';
export { analystLimits, type QueryLimits, type WarehouseHttpUser, writerLimits } from './users.ts';
