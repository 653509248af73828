-- Generated from schemas/clickhouse/006_record_ids.sql by `npm run schema:cluster`: do not edit.
-- source sha256: 23da664ccc1feaaecfd09993571fed01c62cafb4ae280fea0739557da8650309
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS record_ids_local ON CLUSTER __TALLY_CLUSTER__
(
    `project_id` LowCardinality(String),
    `id` UUID,
    `type` LowCardinality(String),
    `received_at` DateTime64(3, 'UTC'),
    `first_received_version` UInt64 MATERIALIZED toUInt64(9007199254740991 - toUnixTimestamp64Milli(received_at))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', first_received_version)
ORDER BY (project_id, id);

CREATE TABLE IF NOT EXISTS record_ids ON CLUSTER __TALLY_CLUSTER__ AS record_ids_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, record_ids_local, cityHash64(project_id, id));

INSERT INTO record_ids (project_id, id, type, received_at) SELECT
    project_id,
    toUUID(id),
    type,
    received_at
FROM events
WHERE isNotNull(toUUIDOrNull(id));

INSERT INTO record_ids (project_id, id, type, received_at) SELECT
    project_id,
    toUUID(id),
    'identify',
    received_at
FROM identities
WHERE isNotNull(toUUIDOrNull(id));

INSERT INTO record_ids (project_id, id, type, received_at) SELECT
    project_id,
    toUUID(id),
    'revenue',
    received_at
FROM revenue
WHERE isNotNull(toUUIDOrNull(id));
