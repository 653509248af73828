-- Generated from schemas/clickhouse/001_events.sql by `npm run schema:cluster`: do not edit.
-- source sha256: f75590311e5e0c465b1f2c7ef6f5bbbea31bcbc176fb205929ac986bfbc2fcad
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS events_local ON CLUSTER __TALLY_CLUSTER__
(
    `project_id` LowCardinality(String),
    `type` LowCardinality(String),
    `id` String,
    `timestamp` DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    `received_at` DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    `client_timestamp` Nullable(DateTime64(3, 'UTC')),
    `timestamp_clamped` Bool,
    `visitor_id` String,
    `visitor_id_derived` Bool,
    `session_id` String,
    `event_name` LowCardinality(String),
    `event_data` Map(String, String),
    `url` String CODEC(ZSTD(3)),
    `hostname` LowCardinality(String),
    `path` String CODEC(ZSTD(3)),
    `referrer` String CODEC(ZSTD(3)),
    `referrer_source` LowCardinality(String),
    `referrer_medium` LowCardinality(String),
    `title` String CODEC(ZSTD(3)),
    `locale` LowCardinality(String),
    `utm_source` LowCardinality(String),
    `utm_medium` LowCardinality(String),
    `utm_campaign` LowCardinality(String),
    `utm_term` String,
    `utm_content` String,
    `browser` LowCardinality(String),
    `browser_version` LowCardinality(String),
    `os` LowCardinality(String),
    `os_version` LowCardinality(String),
    `device_type` LowCardinality(String),
    `is_bot` Bool,
    `user_agent` String CODEC(ZSTD(3)),
    `extra` String CODEC(ZSTD(3))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), type, id);

CREATE TABLE IF NOT EXISTS events ON CLUSTER __TALLY_CLUSTER__ AS events_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, events_local, cityHash64(project_id, visitor_id));
