-- Generated from schemas/clickhouse/007_visits.sql by `npm run schema:cluster`: do not edit.
-- source sha256: ae91fa6566d00567c27255eb06e308fae8e62be17b5637fc3a0a1b4a7248f43e
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

ALTER TABLE events_local ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `country` LowCardinality(String) AFTER locale);

ALTER TABLE events ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `country` LowCardinality(String) AFTER locale);

ALTER TABLE events_local ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `screen_width` UInt16 AFTER country);

ALTER TABLE events ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `screen_width` UInt16 AFTER country);

CREATE TABLE IF NOT EXISTS visits_local ON CLUSTER __TALLY_CLUSTER__
(
    `project_id` LowCardinality(String),
    `visitor_id` String,
    `visitor_hash` UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(visitor_id)),
    `start` DateTime64(3, 'UTC'),
    `end` DateTime64(3, 'UTC'),
    `pageviews` UInt32,
    `events` UInt32,
    `is_bounce` Bool,
    `duration_ms` UInt64,
    `entry_path` String,
    `exit_path` String,
    `hostname` LowCardinality(String),
    `source` LowCardinality(String),
    `referrer` String,
    `channel` LowCardinality(String),
    `utm_source` LowCardinality(String),
    `utm_medium` LowCardinality(String),
    `utm_campaign` LowCardinality(String),
    `utm_term` String,
    `utm_content` String,
    `country` LowCardinality(String),
    `browser` LowCardinality(String),
    `os` LowCardinality(String),
    `device_type` LowCardinality(String),
    `screen_size` LowCardinality(String),
    `pageview_ids` Array(String) CODEC(ZSTD(1)),
    `pageview_times` Array(DateTime64(3, 'UTC')),
    `pageview_paths` Array(LowCardinality(String)),
    `event_ids` Array(String) CODEC(ZSTD(1)),
    `event_times` Array(DateTime64(3, 'UTC')),
    `event_names` Array(LowCardinality(String)),
    `event_data` Array(Map(String, String)),
    `version` UInt64,
    `is_deleted` UInt8
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', version, is_deleted)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, toDate(start), visitor_id, start);

CREATE TABLE IF NOT EXISTS visits ON CLUSTER __TALLY_CLUSTER__ AS visits_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, visits_local, cityHash64(project_id, visitor_id));
