-- Generated from schemas/clickhouse/schema_migrations.sql by `npm run schema:cluster`: do not edit.
-- source sha256: f48eac54cc07ccc43760c9ff29563bce96121cc744ab7b2b76c032a454d8bde0
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS schema_migrations_local ON CLUSTER __TALLY_CLUSTER__
(
    `version` UInt32,
    `name` String,
    `checksum` String,
    `applied_at` DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
ORDER BY version;

CREATE TABLE IF NOT EXISTS schema_migrations ON CLUSTER __TALLY_CLUSTER__ AS schema_migrations_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, schema_migrations_local, cityHash64(version));
