-- Generated from schemas/clickhouse/010_consumer_state.sql by `npm run schema:cluster`: do not edit.
-- source sha256: 4d6d1381df8ad4c70cd78ffcbd5f4de01343bcb029395f3e3266121930e5cb9f
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS visit_durations_local ON CLUSTER __TALLY_CLUSTER__
(
    `project_id` LowCardinality(String),
    `longest_ms` UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', longest_ms)
ORDER BY project_id;

CREATE TABLE IF NOT EXISTS visit_durations ON CLUSTER __TALLY_CLUSTER__ AS visit_durations_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, visit_durations_local, cityHash64(project_id));

INSERT INTO visit_durations (project_id, longest_ms) SELECT
    project_id,
    max(duration_ms)
FROM visits
GROUP BY project_id;

ALTER TABLE record_ids_local ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `landed_at` DateTime DEFAULT now());

ALTER TABLE record_ids ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `landed_at` DateTime DEFAULT now());

ALTER TABLE record_ids_local ON CLUSTER __TALLY_CLUSTER__
    (MODIFY TTL landed_at + toIntervalDay(35));
