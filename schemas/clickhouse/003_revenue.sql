-- Revenue records, once per (project, transaction_id). The consumer inserts only transactions it has
-- not stored yet; ReplacingMergeTree keyed by (project_id, transaction_id) makes that hold even for a
-- redelivered batch, and its version column (higher for earlier arrival) keeps the first record
-- received when two differ, so a retry or a replay never changes what was stored. No partitions: a
-- duplicate may arrive months later and must meet the original in the same partition; revenue
-- volumes are small and every MRR computation reads a project's whole history anyway.
-- Money is Decimal (exact sums); metadata is a Map with bloom-filter indexes on its keys and values
-- (`metadata['plan'] = 'pro'`); payload keeps the validated payload exactly as received.
CREATE TABLE IF NOT EXISTS revenue
(
    project_id LowCardinality(String),
    transaction_id String,
    id String,
    timestamp DateTime64(3, 'UTC'),
    received_at DateTime64(3, 'UTC'),
    client_timestamp Nullable(DateTime64(3, 'UTC')),
    timestamp_clamped Bool,
    customer_id String,
    visitor_id String,
    session_id String,
    event_type LowCardinality(String),
    amount Decimal(38, 6),
    currency LowCardinality(String),
    mrr_impact Nullable(Decimal(38, 6)),
    is_recurring Nullable(Bool),
    customer_subscription_id String,
    payment_processor LowCardinality(String),
    metadata Map(String, String),
    payload String CODEC(ZSTD(3)),
    user_agent String CODEC(ZSTD(3)),
    first_received_version UInt64 MATERIALIZED toUInt64(9007199254740991 - toUnixTimestamp64Milli(received_at)),
    INDEX metadata_keys mapKeys(metadata) TYPE bloom_filter GRANULARITY 1,
    INDEX metadata_values mapValues(metadata) TYPE bloom_filter GRANULARITY 1
)
ENGINE = ReplacingMergeTree(first_received_version)
ORDER BY (project_id, transaction_id);

-- Revenue as analysts should read it: one row per transaction, the first received.
CREATE VIEW IF NOT EXISTS revenue_records AS
SELECT * FROM revenue FINAL;

-- One row per metadata entry, to search and group by key and value.
CREATE VIEW IF NOT EXISTS revenue_metadata AS
SELECT project_id, transaction_id, customer_id, timestamp, currency, key, value
FROM revenue FINAL
ARRAY JOIN mapKeys(metadata) AS key, mapValues(metadata) AS value;

-- Cash revenue per calendar month (UTC) and currency: the sum of amount over every record, refunds and
-- churns with negative amounts subtracting. A plain view, not a materialized one: a materialized view
-- would sum rows before ReplacingMergeTree removes duplicates.
CREATE VIEW IF NOT EXISTS revenue_cash_monthly AS
SELECT
    project_id,
    currency,
    toStartOfMonth(timestamp) AS month,
    sum(amount) AS cash_revenue,
    count() AS records
FROM revenue FINAL
GROUP BY project_id, currency, month;
