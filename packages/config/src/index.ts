// Tally's configuration: one typed schema with defaults, read from the environment and optionally from an
// env file. Every setting is documented here, where it is declared; the README's table is checked against
// this schema by a test. A setting that holds a secret (SECRET_SETTINGS) may instead be given as
// `<NAME>_FILE`, a file holding its value (a Docker secret), so that no password sits in the environment.
// What the settings decide is derived here once, as they load: the data directory made absolute, and the
// backends they choose (chooseBackends), whose rules (Kafka needs its schema registry, a ClickHouse
// cluster needs a server) are checked then, so that a process or a command never starts on settings that
// name no backend.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import envSchema from 'env-schema';

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({
    default: 8080,
    minimum: 0,
    maximum: 65535,
    description: 'Port of the public ingest API.',
  }),
  HOST: Type.String({ default: '0.0.0.0', description: 'Address the public ingest API binds to.' }),
  GATEWAY_PUBLIC_URL: Type.Optional(
    Type.String({
      description:
        "The gateway's address as browsers reach it (`https://t.example.com`), shown in the dashboard's install snippet (`<script src=\"…/tally.js\">`); default the dashboard's host name on `PORT`.",
    }),
  ),
  ADMIN_PORT: Type.Integer({
    default: 8081,
    minimum: 0,
    maximum: 65535,
    description: 'Port of the admin server (`/healthz`, `/readyz`, `/metrics`).',
  }),
  ADMIN_HOST: Type.String({
    default: '127.0.0.1',
    description: 'Address the admin server binds to; localhost by default so that it is not public.',
  }),
  DASHBOARD_PORT: Type.Integer({
    default: 8082,
    minimum: 0,
    maximum: 65535,
    description: 'Port of the dashboard: its web app, sign-in, share links and the read API (`/api/v1`).',
  }),
  DASHBOARD_HOST: Type.String({ default: '0.0.0.0', description: 'Address the dashboard binds to.' }),
  DASHBOARD_PUBLIC_URL: Type.Optional(
    Type.String({
      description:
        "The dashboard's address as people reach it (`https://tally.example.com`), used in the sign-in links `tally users add` prints and as an origin state-changing requests may come from; default: where the dashboard running on TALLY_DATA_DIR listens (the address it publishes there), else `http://localhost:DASHBOARD_PORT`.",
    }),
  ),
  TALLY_DATA_DIR: Type.String({
    default: './.tally',
    description:
      "Directory of the embedded record log, the token file, the visitor-id salts and the dashboard's users, sessions and share links (`dashboard.mdb`). One gateway (or `npm start`) per directory: a second one on the same directory refuses to start.",
  }),
  REDIS_URL: Type.Optional(
    Type.String({
      description:
        "Redis URL (`redis://host:port/db`). When set, rate-limit counters, tokens, visitor-id salts and the dashboard's users, sessions and share links are shared through Redis by every replica; otherwise they are kept in memory and in `TALLY_DATA_DIR`. Also `REDIS_URL_FILE`.",
    }),
  ),
  REDIS_PASSWORD: Type.Optional(
    Type.String({
      description:
        'Password of the Redis server of `REDIS_URL` (its `requirepass`), put into the URL; usually given as `REDIS_PASSWORD_FILE`, a file holding it (a Docker secret). Refused when the URL has a password too.',
    }),
  ),
  REDIS_KEY_PREFIX: Type.String({
    default: 'tally:',
    description:
      'Prefix of every Redis key Tally writes, so that several deployments (or tests) can share a server.',
  }),
  GEO_DATABASE: Type.Union([Type.Literal('city'), Type.Literal('country')], {
    default: 'city',
    description:
      "The IP database the gateway looks each client's address up in (the address itself is never stored): `city` (DB-IP's IP to City Lite: country, region and city; 128 MiB) or `country` (DB-IP's IP to Country Lite: the country alone, ~8 MiB). Both ship in npm packages; nothing is downloaded at run time. The gateway reads the files where they lie, as lookups need them (their pages are the page cache's, shared by the host's processes), not into its own memory.",
  }),
  TRUST_PROXY: Type.String({
    default: '',
    description:
      'Comma-separated addresses or CIDRs of trusted reverse proxies. `X-Forwarded-For` is honoured only from these.',
  }),
  RATE_LIMIT_PER_HOUR: Type.Integer({
    default: 2000,
    minimum: 1,
    description:
      'Requests per client IP per hour on `POST /api/ingest` (a fixed one-hour window); over it: 429 with `Retry-After`.',
  }),
  BODY_LIMIT: Type.Integer({
    default: 65536,
    minimum: 1024,
    description:
      'Largest accepted request body in bytes, after decoding a gzip body (and before); larger bodies get 413.',
  }),
  // Slow clients (slowloris) must not hold connections for long: Node's own defaults would let a request
  // take 5 minutes, and Fastify disables even that. These bound each phase of a connection.
  HEADERS_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 1,
    description:
      'Longest a client may take to send the request headers; then it gets 408 and the connection is closed (slow clients cannot hold connections).',
  }),
  REQUEST_TIMEOUT_MS: Type.Integer({
    default: 30_000,
    minimum: 1,
    description:
      'Longest a client may take to send a whole request, headers and body; then 408 and the connection is closed. It also bounds `HEADERS_TIMEOUT_MS`.',
  }),
  BODY_TIMEOUT_MS: Type.Integer({
    default: 5000,
    minimum: 1,
    description:
      'A request body must arrive within this, plus its length (`Content-Length`, or `BODY_LIMIT` when chunked) at `BODY_MIN_BYTES_PER_SECOND`, counted from the end of its headers; then 408 and the connection is closed. By default 5.25 s for a 1 KiB body and 21 s for one of 64 KiB, so a client that trickles its body cannot hold a connection for `REQUEST_TIMEOUT_MS`.',
  }),
  BODY_MIN_BYTES_PER_SECOND: Type.Integer({
    default: 4096,
    minimum: 1,
    description:
      'The slowest body transfer the gateway waits for (see `BODY_TIMEOUT_MS`): 4 KiB/s by default, below a 2G mobile link.',
  }),
  CONNECTION_TIMEOUT_MS: Type.Integer({
    default: 30_000,
    minimum: 1,
    description:
      'A connection on which nothing is received or sent for this long (other than between keep-alive requests) is closed: a client that connects and sends nothing, stops sending, or stops reading the response. Keep it above `APPEND_TIMEOUT_MS`.',
  }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({
    default: 72_000,
    minimum: 1,
    description:
      'How long an idle keep-alive connection stays open between requests (longer than the 60 s idle timeout of common load balancers, so the gateway does not close a connection they are about to reuse).',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    {
      default: 'info',
      description:
        'Level of the JSON logs (`fatal` … `trace`, `silent`). Logs never hold a token, a raw IP or a payload.',
    },
  ),
  APPEND_TIMEOUT_MS: Type.Integer({
    default: 5000,
    minimum: 1,
    description: 'How long a request waits for the record log to make a record durable before answering 503.',
  }),
  REFUSAL_FLUSH_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    description:
      "How often each gateway event loop stores its counts of refused requests per project, hour and status (the dashboard's health view reads them from the state store: `TALLY_DATA_DIR` or Redis); also at shutdown.",
  }),
  GATEWAY_WORKERS: Type.Integer({
    default: 0,
    minimum: 0,
    maximum: 256,
    description:
      'Event loops (worker threads) that serve the public ingest API, sharing its port (`reusePort`, Node.js 22.12 or newer). `0` (the default): one per core (`os.availableParallelism()`), as far as the memory of the process holds them: each needs about 128 MiB under load, so in a container whose memory limit is below 256 MiB there is one, and below (loops + 1) × 128 MiB the main thread of the gateway serves one of them itself instead of only holding the log (the log says so). On an older Node.js there is one, and the log says why. The loops of one process share the in-memory rate-limit counts (without `REDIS_URL`) and the connections per client IP. With the embedded log they hand their records to the one writer in the main thread, which commits them together; with Kafka each has its own producer.',
  }),
  GATEWAY_MAX_IN_FLIGHT: Type.Integer({
    default: 256,
    minimum: 1,
    description:
      'Requests one gateway event loop handles at once; a request beyond it is answered at once with 503 and `Retry-After` (counted in `tally_gateway_shed_total`), so that the accepted ones keep a short wait.',
  }),
  GATEWAY_MAX_PENDING_APPENDS: Type.Integer({
    default: 256,
    minimum: 1,
    description:
      'Requests one gateway event loop keeps waiting for the record log to make their record durable; while that many wait, a new request gets 503 and `Retry-After` at once. Below `GATEWAY_MAX_IN_FLIGHT` it sheds load earlier when the log is slow (appends share one commit, so many waiting is not by itself a long wait).',
  }),
  GATEWAY_MAX_CONSUMER_LAG: Type.Integer({
    default: 100_000,
    minimum: 0,
    description:
      'Where the consumers run in the gateway\'s process (`npm start`): records a consumer group may have waiting before the gateway answers every ingestion request 503 with `Retry-After: 5` (`tally_gateway_shed_total{reason="consumer_lag"}`), until the lag is back under 90% of it. Bounds how late an acknowledged record lands when the process accepts faster than it lands; 0 turns it off. A gateway on its own does not read the consumers\' lag.',
  }),
  GATEWAY_MAX_CONNECTIONS_PER_IP: Type.Integer({
    default: 128,
    minimum: 1,
    description:
      "Connections one client IP may hold open at once on the public port, counted across the process's event loops; a connection beyond it is closed as soon as it is accepted, before anything is read (`tally_gateway_connections_refused_total{reason=\"per_ip\"}`). A trusted proxy's connections (`TRUST_PROXY`) are not capped: there each request counts against its client's address (from `X-Forwarded-For`) while it is in progress, and one beyond the cap is answered 503 with `Retry-After` and `Connection: close`.",
  }),
  GATEWAY_MAX_CONNECTIONS: Type.Integer({
    default: 0,
    minimum: 0,
    description:
      "Connections the public port keeps open at once, for the whole process (split evenly among its event loops); beyond it a new connection is closed at once. `0` (the default): three quarters of the process's file-descriptor limit (the soft `RLIMIT_NOFILE`, from `/proc/self/limits` on Linux), the rest kept for the record log, the warehouse, the state store and the sockets to Kafka, Redis and the admin and dashboard ports; no cap where the limit cannot be read or is unlimited.",
  }),
  FUTURE_TIMESTAMP_TOLERANCE_MS: Type.Integer({
    default: 3_600_000,
    minimum: 0,
    description:
      'A client timestamp further than this in the future is replaced by `received_at` and flagged.',
  }),
  TOKEN_REFRESH_MS: Type.Integer({
    default: 1000,
    minimum: 50,
    description:
      'How often a running gateway checks for created or revoked tokens. A token it does not know yet makes it check at once (at most every 250 ms), so a new token works from its first request; a revoked one is refused within this interval.',
  }),
  LOG_RETENTION_HOURS: Type.Integer({
    default: 168,
    minimum: 1, // on Kafka, retention.ms is not tied to consumers: 0 would delete records before they are read
    description:
      "How long the record log keeps a record, so that the warehouse can be rebuilt from it. Embedded log: a record is deleted once it is this old *and* every consumer group reading its type has committed past it (a type no group has read yet keeps everything; the log's file does not shrink, its space is reused). Kafka: `retention.ms` of the topics Tally creates, whether consumers have read the records or not: the health view warns when a group's oldest record not landed is older than 80% of its topic's `retention.ms`.",
  }),
  LOG_REOPEN_BYTES: Type.Integer({
    default: 64 * 1024 * 1024,
    minimum: 0,
    description:
      'Embedded log: after this many bytes appended, the log\'s writer (the gateway, on its own or in `npm start`) closes and reopens its LMDB environment (appends, and in `npm start` the consumers\' reads, wait a few milliseconds), releasing the file pages mapped around each commit and read by the consumers, which otherwise stay resident in the process (`RssFile`) as the log grows. `0`: never. See docs/design/record-log.md, "Resident file pages".',
  }),
  KAFKA_BROKERS: Type.Optional(
    Type.String({
      description:
        'Comma-separated Kafka bootstrap brokers (`host:port`). With `SCHEMA_REGISTRY_URL`, selects the Kafka record log (Avro records on per-type topics); with neither, the embedded log in `TALLY_DATA_DIR`. One without the other is refused as the configuration loads.',
    }),
  ),
  SCHEMA_REGISTRY_URL: Type.Optional(
    Type.String({
      description:
        'Base URL of a Confluent-compatible schema registry (for Apicurio: `http://host:8080/apis/ccompat/v7`). The Avro schemas are registered at start-up.',
    }),
  ),
  KAFKA_TOPIC_PREFIX: Type.String({
    default: 'tally.',
    pattern: '^[A-Za-z0-9._-]*$',
    description:
      'Topics are `<prefix><type>` (`tally.pageview`, `tally.event`, `tally.identify`, `tally.revenue`); consumer groups share the prefix.',
  }),
  KAFKA_PARTITIONS: Type.Integer({
    default: 6,
    minimum: 1,
    description:
      'Partitions of each topic, when Tally creates the missing topics at start-up. Tally never changes an existing topic: at start it compares its partitions, replication factor, `min.insync.replicas`, `retention.ms` and `retention.bytes` with the settings and warns of each difference (a log line, `tally_kafka_topic_setting_mismatch`, the health view).',
  }),
  KAFKA_RETENTION_BYTES: Type.Integer({
    default: -1,
    minimum: -1,
    description:
      "`retention.bytes` of each record topic Tally creates: the most bytes Kafka keeps *per partition* before it deletes the oldest records, read or not (a topic holds up to `KAFKA_PARTITIONS` times this). `-1` (the default): no bound by size, records are kept for `LOG_RETENTION_HOURS`, which is what lets a consumer stopped for days resume without a gap; size the brokers' disks for it. Set a bound only to protect the disks, above what the retention period holds.",
  }),
  KAFKA_REPLICATION_FACTOR: Type.Integer({
    default: 1,
    minimum: 1,
    description:
      'Replication factor of each topic Tally creates (3 on a production cluster; `min.insync.replicas` is set to min(2, factor)).',
  }),
  KAFKA_COMPRESSION: Type.Union([Type.Literal('none'), Type.Literal('gzip'), Type.Literal('snappy')], {
    default: 'snappy',
    description:
      'Compression of produce requests: `none`, `gzip` or `snappy` (measured fastest; see docs/design/kafka.md).',
  }),
  KAFKA_LINGER_MS: Type.Integer({
    default: 2,
    minimum: 0,
    description: 'How long an append waits for others to share its produce request.',
  }),
  SCHEMA_COMPATIBILITY: Type.Union(
    [
      'BACKWARD',
      'BACKWARD_TRANSITIVE',
      'FORWARD',
      'FORWARD_TRANSITIVE',
      'FULL',
      'FULL_TRANSITIVE',
      'NONE',
    ].map((c) => Type.Literal(c)),
    {
      default: 'BACKWARD',
      description:
        "Compatibility level set on each topic's `-value` subject in the schema registry when the subject has none (the first start); a level the subject has is the operator's and is kept (`npx tally kafka compatibility [--set LEVEL]` shows and changes it). Each registration is checked by the registry against the subject's level.",
    },
  ),
  CLICKHOUSE_URL: Type.Optional(
    Type.String({
      description:
        'ClickHouse server HTTP URL, credentials included (`http://user:password@host:8123`). When set, the consumers and the CLI use it; otherwise the embedded chDB warehouse under `TALLY_DATA_DIR/warehouse`. Also `CLICKHOUSE_URL_FILE`.',
    }),
  ),
  CLICKHOUSE_PASSWORD: Type.Optional(
    Type.String({
      description:
        "Password of `CLICKHOUSE_URL`'s user, put into the URL; usually given as `CLICKHOUSE_PASSWORD_FILE` (a Docker secret). Refused when the URL has a password too.",
    }),
  ),
  CLICKHOUSE_DATABASE: Type.String({
    default: 'tally',
    pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
    description: 'Database of the warehouse (created if missing), on the ClickHouse server or in chDB.',
  }),
  CLICKHOUSE_CLUSTER: Type.Optional(
    Type.String({
      pattern: '^([A-Za-z_][A-Za-z0-9_]*)?$',
      description:
        'A cluster of the ClickHouse server\'s `remote_servers` to spread the warehouse over (empty: one server). The migrations then create every table ON CLUSTER as a replicated local table (`events_local`, …) with a `Distributed` table of the same name as on one server over it, and the views ON CLUSTER; inserts wait for every shard. Needs `CLICKHOUSE_URL`. See the README\'s "ClickHouse cluster".',
    }),
  ),
  CONSUMER_BATCH_SIZE: Type.Integer({
    default: 20_000,
    minimum: 1,
    description:
      'Most records a consumer inserts into the warehouse at once. A batch is landed in a few statements whatever its size, so larger batches land a backlog faster (BENCHMARKS.md, "npm start sustained"); a batch that does not fill closes at `CONSUMER_BATCH_WAIT_MS`.',
  }),
  CONSUMER_BATCH_WAIT_MS: Type.Integer({
    default: 500,
    minimum: 1,
    description:
      'Longest a record waits, from its arrival at the gateway, before its consumer batch is inserted (a full batch is inserted at once, and a consumer that falls behind lands what waits in batches up to `CONSUMER_BATCH_SIZE`). Most of how long a record takes to show at low traffic. The revenue consumer has its own: `REVENUE_BATCH_WAIT_MS`.',
  }),
  REVENUE_BATCH_WAIT_MS: Type.Integer({
    default: 2000,
    minimum: 1,
    description:
      'Longest a revenue record waits, from its arrival at the gateway, before its batch is inserted: the revenue consumer\'s `CONSUMER_BATCH_WAIT_MS`. Longer than the analytics consumer\'s because each revenue batch recomputes the MRR of its customers from their whole stored history, a cost per batch rather than per record; waiting longer lands the same records in fewer batches (BENCHMARKS.md, "revenue in fewer batches").',
  }),
  CONSUMER_STALL_MS: Type.Integer({
    default: 120_000,
    minimum: 1,
    description:
      'How long records may wait for a consumer group while it commits no batch before the consumer reports not ready (`/readyz` 503, saying why) and the health view shows the group stalled.',
  }),
  WAREHOUSE_HTTP_HOST: Type.String({
    default: '127.0.0.1',
    description:
      "Address the ClickHouse-compatible HTTP interface of the embedded warehouse binds to: only this machine by default; `0.0.0.0` (or one interface's address) to let a BI tool on another host reach it, deliberately (plain HTTP: put TLS in front of it on an untrusted network).",
  }),
  WAREHOUSE_HTTP_PORT: Type.Integer({
    default: 0,
    minimum: 0,
    maximum: 65535,
    description:
      'Port of the ClickHouse-compatible HTTP interface `npm start` serves over its embedded warehouse (`0`: any free port); `npx tally warehouse credentials` prints where, and the users.',
  }),
  WAREHOUSE_ANALYST_MAX_EXECUTION_TIME_S: Type.Integer({
    default: 60,
    minimum: 0,
    description:
      "Longest a query of the warehouse HTTP interface's read-only analyst may run, in seconds (`0`: no limit); the engine stops it with TIMEOUT_EXCEEDED. The analyst cannot raise it.",
  }),
  WAREHOUSE_ANALYST_MAX_MEMORY_MB: Type.Integer({
    default: 2048,
    minimum: 0,
    description:
      "Most memory one analyst query may take, in MiB (`0`: no limit); over it the engine stops it with MEMORY_LIMIT_EXCEEDED, so one query cannot take the memory Tally's own process needs.",
  }),
  WAREHOUSE_ANALYST_MAX_ROWS_TO_READ: Type.Integer({
    default: 2_000_000_000,
    minimum: 0,
    description: 'Most rows one analyst query may read (`0`: no limit).',
  }),
  WAREHOUSE_ANALYST_MAX_RESULT_MB: Type.Integer({
    default: 1024,
    minimum: 0,
    description: 'Largest result of one analyst query before compression, in MiB (`0`: no limit).',
  }),
  WAREHOUSE_WRITER_MAX_EXECUTION_TIME_S: Type.Integer({
    default: 600,
    minimum: 0,
    description:
      "Longest a query of the HTTP interface's writer (`tally sql`, `tally report`, consumers given the interface as `CLICKHOUSE_URL`) may run, in seconds (`0`: no limit).",
  }),
  WAREHOUSE_WRITER_MAX_MEMORY_MB: Type.Integer({
    default: 4096,
    minimum: 0,
    description: "Most memory one query of the HTTP interface's writer may take, in MiB (`0`: no limit).",
  }),
  SMTP_HOST: Type.Optional(
    Type.String({
      description:
        'Host of the SMTP server Tally sends mail through: invitations, password links, reports. Unset: no mail is sent, and the links are shown to whoever asked for them (the inviting admin, `tally users add`) instead.',
    }),
  ),
  SMTP_PORT: Type.Integer({
    default: 587,
    minimum: 1,
    maximum: 65535,
    description: 'Port of `SMTP_HOST`: 587 (submission, STARTTLS) by default, 465 with `SMTP_SECURE=tls`.',
  }),
  SMTP_SECURE: Type.Union([Type.Literal('starttls'), Type.Literal('tls'), Type.Literal('none')], {
    default: 'starttls',
    description:
      '`starttls`: connect in plain text and require the upgrade to TLS (port 587); `tls`: TLS from the first byte (port 465); `none`: no TLS at all (a relay on localhost only).',
  }),
  SMTP_USER: Type.Optional(
    Type.String({ description: 'User name to sign in to `SMTP_HOST` with; unset: no sign-in.' }),
  ),
  SMTP_PASSWORD: Type.Optional(
    Type.String({
      description:
        'Password of `SMTP_USER`; usually given as `SMTP_PASSWORD_FILE`, a file holding it (a Docker secret).',
    }),
  ),
  SMTP_FROM: Type.Optional(
    Type.String({
      description:
        "The sender of Tally's mail (`Tally <tally@example.com>`); needed when `SMTP_HOST` is set.",
    }),
  ),
  ALERTS_INTERVAL_MS: Type.Integer({
    default: 60_000,
    minimum: 1_000,
    description:
      "How often the dashboard evaluates the projects' alert rules and retries the deliveries that failed (docs/alerts.md).",
  }),
  ALERTS_WEBHOOK_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    description:
      "How long an alert's webhook POST may take before it counts as failed (and is retried at the next evaluation).",
  }),
  TALLY_READY_FILE: Type.Optional(
    Type.String({
      description:
        'A file a process writes, as one JSON object, once it is ready: its name, pid and the addresses it ' +
        'serves ({"service":"tally","pid":…,"endpoints":{"url":…,"adminUrl":…}}); removed when it stops. ' +
        'For supervisors, tests and benchmarks, which read it instead of the lines printed for people.',
    }),
  ),
  TALLY_ENV_FILE: Type.Optional(
    Type.String({
      description: 'An env file (`KEY=value` lines) to read settings from; the environment wins over it.',
    }),
  ),
});

/** The settings as the schema declares them, read from the environment and the env file. */
export type TallySettings = Static<typeof ConfigSchema>;

/**
 * The backends the settings choose, decided once as the configuration loads: every process and the CLI
 * read them here, rather than testing the settings again (and disagreeing).
 */
export interface Backends {
  /** The record log: Kafka (KAFKA_BROKERS with SCHEMA_REGISTRY_URL), else the embedded log in the data directory. */
  log:
    | { kind: 'kafka'; brokers: string[] /** Without a trailing slash. */; schemaRegistryUrl: string }
    | { kind: 'embedded' };
  /** The warehouse: the ClickHouse server of CLICKHOUSE_URL (on CLICKHOUSE_CLUSTER, if set), else chDB. */
  warehouse: { kind: 'clickhouse'; url: string; cluster: string | undefined } | { kind: 'chdb' };
  /**
   * Where tokens, visitor-id salts, rate-limit counts and the state store are shared: Redis (REDIS_URL),
   * else the data directory's files (and each process's memory).
   */
  state: { kind: 'redis'; url: string } | { kind: 'files' };
}

/** The configuration: the settings, and what they decide (derived once, by loadConfig). */
export interface TallyConfig extends TallySettings {
  /** TALLY_DATA_DIR made absolute, against the directory the configuration was loaded in. */
  dataDir: string;
  backends: Backends;
}

/** Settings that hold a secret (a password, or a URL with one): each may be given as `<NAME>_FILE` instead. */
export const SECRET_SETTINGS = [
  'REDIS_URL',
  'REDIS_PASSWORD',
  'CLICKHOUSE_URL',
  'CLICKHOUSE_PASSWORD',
  'SMTP_PASSWORD',
] as const;

/** Whether `key` names a setting: one of the schema, or `<NAME>_FILE` of a secret one. */
export function isSettingName(key: string): boolean {
  return key in ConfigSchema.properties || SECRET_SETTINGS.some((name) => key === `${name}_FILE`);
}

/**
 * Reads the configuration from `env` (default: the process environment) and its env file, applying defaults.
 * The env file is `TALLY_ENV_FILE`, else the working directory's `.env` when reading the process environment;
 * an environment given as an object is the whole environment (a `.env` left in the checkout does not reach it).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): TallyConfig {
  const file = env.TALLY_ENV_FILE ?? (env === process.env ? '.env' : undefined);
  const useFile = file !== undefined && existsSync(resolve(file));
  if (env.TALLY_ENV_FILE && !useFile) throw new Error(`TALLY_ENV_FILE ${env.TALLY_ENV_FILE} does not exist`);
  // The env file, then the environment over it.
  const data: Record<string, string | undefined> = useFile
    ? { ...parseEnv(readFileSync(resolve(file), 'utf8')) }
    : {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') data[key] = value;
  for (const name of SECRET_SETTINGS) {
    const path = data[`${name}_FILE`];
    if (path === undefined) continue;
    if (data[name] !== undefined) throw new Error(`${name} and ${name}_FILE are both set: set one`);
    try {
      // One trailing newline (what `echo` and editors leave) is not part of the secret.
      data[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new Error(
        `${name}_FILE ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`,
      );
    }
  }
  const settings = envSchema<TallySettings>({ schema: ConfigSchema, data, env: false, dotenv: false });
  settings.REDIS_URL = withPassword(settings.REDIS_URL, settings.REDIS_PASSWORD, 'REDIS');
  settings.CLICKHOUSE_URL = withPassword(settings.CLICKHOUSE_URL, settings.CLICKHOUSE_PASSWORD, 'CLICKHOUSE');
  return { ...settings, dataDir: resolve(settings.TALLY_DATA_DIR), backends: chooseBackends(settings) };
}

/** The backends the settings name, refusing the combinations that name none (each rule said once, here). */
export function chooseBackends(settings: TallySettings): Backends {
  const { KAFKA_BROKERS: brokers, SCHEMA_REGISTRY_URL: registry } = settings;
  if (Boolean(brokers) !== Boolean(registry)) {
    throw new Error(
      'KAFKA_BROKERS and SCHEMA_REGISTRY_URL go together: set both for Kafka, neither for the embedded log',
    );
  }
  if (settings.CLICKHOUSE_CLUSTER && !settings.CLICKHOUSE_URL) {
    throw new Error('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: the embedded warehouse is one node');
  }
  if (settings.SMTP_HOST && !settings.SMTP_FROM) {
    throw new Error('SMTP_HOST needs SMTP_FROM: the address Tally sends its mail from');
  }
  return {
    log:
      brokers && registry
        ? {
            kind: 'kafka',
            brokers: brokers
              .split(',')
              .map((b) => b.trim())
              .filter(Boolean),
            schemaRegistryUrl: registry.replace(/\/$/, ''),
          }
        : { kind: 'embedded' },
    warehouse: settings.CLICKHOUSE_URL
      ? {
          kind: 'clickhouse',
          url: settings.CLICKHOUSE_URL,
          cluster: settings.CLICKHOUSE_CLUSTER || undefined,
        }
      : { kind: 'chdb' },
    state: settings.REDIS_URL ? { kind: 'redis', url: settings.REDIS_URL } : { kind: 'files' },
  };
}

/** `url` with `password` in it (URL-encoded), when both are given. */
function withPassword(
  url: string | undefined,
  password: string | undefined,
  name: string,
): string | undefined {
  if (url === undefined || password === undefined) return url;
  const parsed = new URL(url);
  if (parsed.password) throw new Error(`${name}_URL has a password and ${name}_PASSWORD is set: set one`);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** Parses TRUST_PROXY into the list Fastify's trustProxy option takes (false when empty). */
export function trustedProxies(config: Pick<TallySettings, 'TRUST_PROXY'>): string[] | false {
  const list = config.TRUST_PROXY.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length ? list : false;
}
