-- Generated from schemas/clickhouse/008_exchange_rates.sql by `npm run schema:cluster`: do not edit.
-- source sha256: 953f1610c47a9f1020465c59a1c2ed099c5c3230a8c94c157d27d23578210551
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS exchange_rates_local ON CLUSTER __TALLY_CLUSTER__
(
    `base` LowCardinality(String),
    `currency` LowCardinality(String),
    `period` String,
    `rate` String,
    `loaded_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', loaded_at)
ORDER BY (base, currency, period);

CREATE TABLE IF NOT EXISTS exchange_rates ON CLUSTER __TALLY_CLUSTER__ AS exchange_rates_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, exchange_rates_local, cityHash64(base, currency, period));
