// ClickHouse's HTTP interface over the embedded chDB warehouse: the pieces live in http/ (one concern per
// file: protocol, compression, statement scan, the statement policy, users and their limits, sessions,
// execution, the server, the endpoint file);
// this module is what the package exports of them: the endpoint file and the users' limits, which load no
// engine, and the server's types (serveClickHouseHttp itself is open.ts's loader: the server loads chDB).
export {
  type Credentials,
  endpointFile,
  endpointUrl,
  type PublishedEndpoint,
  publishEndpoint,
  readPublishedEndpoint,
  unpublishEndpoint,
  warehouseCredentials,
} from './http/endpoint.ts';
export type {
  ClickHouseHttpInterface,
  ClickHouseHttpInterfaceOptions,
  WarehouseHttpUser,
} from './http/server.ts';
export { analystLimits, type QueryLimits, writerLimits } from './http/users.ts';
