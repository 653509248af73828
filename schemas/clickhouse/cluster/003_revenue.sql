-- Generated from schemas/clickhouse/003_revenue.sql by `npm run schema:cluster`: do not edit.
-- source sha256: b8cf2221a5029931972a5c3b51f45f106c1154be5bd7d25224cffeafc952d2bf
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS revenue_local ON CLUSTER __TALLY_CLUSTER__
(
    `project_id` LowCardinality(String),
    `transaction_id` String,
    `id` String,
    `timestamp` DateTime64(3, 'UTC'),
    `received_at` DateTime64(3, 'UTC'),
    `client_timestamp` Nullable(DateTime64(3, 'UTC')),
    `timestamp_clamped` Bool,
    `customer_id` String,
    `visitor_id` String,
    `session_id` String,
    `event_type` LowCardinality(String),
    `amount` Decimal(38, 6),
    `currency` LowCardinality(String),
    `mrr_impact` Nullable(Decimal(38, 6)),
    `is_recurring` Nullable(Bool),
    `customer_subscription_id` String,
    `payment_processor` LowCardinality(String),
    `metadata` Map(String, String),
    `payload` String CODEC(ZSTD(3)),
    `user_agent` String CODEC(ZSTD(3)),
    `first_received_version` UInt64 MATERIALIZED toUInt64(9007199254740991 - toUnixTimestamp64Milli(received_at)),
    INDEX metadata_keys mapKeys(metadata) TYPE bloom_filter GRANULARITY 1,
    INDEX metadata_values mapValues(metadata) TYPE bloom_filter GRANULARITY 1
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', first_received_version)
ORDER BY (project_id, transaction_id);

CREATE TABLE IF NOT EXISTS revenue ON CLUSTER __TALLY_CLUSTER__ AS revenue_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, revenue_local, cityHash64(project_id, transaction_id));

CREATE VIEW IF NOT EXISTS revenue_records ON CLUSTER __TALLY_CLUSTER__
AS SELECT *
FROM revenue
FINAL;

CREATE VIEW IF NOT EXISTS revenue_metadata ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    transaction_id,
    customer_id,
    timestamp,
    currency,
    key,
    value
FROM revenue
FINAL
ARRAY JOIN
    mapKeys(metadata) AS key,
    mapValues(metadata) AS value;

CREATE VIEW IF NOT EXISTS revenue_cash_monthly ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    currency,
    toStartOfMonth(timestamp) AS month,
    sum(amount) AS cash_revenue,
    count() AS records
FROM revenue
FINAL
GROUP BY
    project_id,
    currency,
    month;
