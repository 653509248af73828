-- Pageviews and custom events: one row per record, enriched by the analytics consumer.
-- ReplacingMergeTree keyed by the record id: a batch delivered twice (a consumer that stopped between
-- its insert and its commit) leaves one row per id, and the views read with FINAL so they never count
-- a copy that a merge has not yet removed. A record's key includes its day, so both copies of a record
-- always land in the same monthly partition (where ReplacingMergeTree deduplicates).
-- Ordered by project, day, type, id: every query filters one project and a time range; ids are UUIDv7
-- (time-ordered) unless the client chose one, so within a day rows are nearly in time order and the
-- Delta codec on the timestamps compresses well. Absent optional strings are '' (no Nullable cost).
CREATE TABLE IF NOT EXISTS events
(
    project_id LowCardinality(String),
    type LowCardinality(String),
    id String,
    timestamp DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    received_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    client_timestamp Nullable(DateTime64(3, 'UTC')),
    timestamp_clamped Bool,
    visitor_id String,
    visitor_id_derived Bool,
    session_id String,
    event_name LowCardinality(String),
    event_data Map(String, String),
    url String CODEC(ZSTD(3)),
    hostname LowCardinality(String),
    path String CODEC(ZSTD(3)),
    referrer String CODEC(ZSTD(3)),
    referrer_source LowCardinality(String),
    referrer_medium LowCardinality(String),
    title String CODEC(ZSTD(3)),
    locale LowCardinality(String),
    utm_source LowCardinality(String),
    utm_medium LowCardinality(String),
    utm_campaign LowCardinality(String),
    utm_term String,
    utm_content String,
    browser LowCardinality(String),
    browser_version LowCardinality(String),
    os LowCardinality(String),
    os_version LowCardinality(String),
    device_type LowCardinality(String),
    is_bot Bool,
    user_agent String CODEC(ZSTD(3)),
    extra String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), type, id);
