-- Generated from schemas/clickhouse/009_relanded_parts.sql by `npm run schema:cluster`: do not edit.
-- source sha256: 5fdb5ec07d99ea77797b4e3ebbf95090aad96ba02eec0e6b1499a31863978e90
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS relanded_parts_local ON CLUSTER __TALLY_CLUSTER__
(
    `table_name` String,
    `part` String,
    `reason` String,
    `relanded_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
ORDER BY (table_name, part);

CREATE TABLE IF NOT EXISTS relanded_parts ON CLUSTER __TALLY_CLUSTER__ AS relanded_parts_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, relanded_parts_local, cityHash64(table_name, part));
