-- Generated from schemas/clickhouse/002_identities.sql by `npm run schema:cluster`: do not edit.
-- source sha256: 30687055d247d1874bccdf21e0975072be17b52b0546d718a748f2195ca5ce30
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS identities_local ON CLUSTER __TALLY_CLUSTER__
(
    `project_id` LowCardinality(String),
    `id` String,
    `timestamp` DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    `received_at` DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    `visitor_id` String,
    `visitor_id_derived` Bool,
    `session_id` String,
    `customer_id` String,
    `user_agent` String CODEC(ZSTD(3)),
    `extra` String CODEC(ZSTD(3))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
ORDER BY (project_id, visitor_id, id);

CREATE TABLE IF NOT EXISTS identities ON CLUSTER __TALLY_CLUSTER__ AS identities_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, identities_local, cityHash64(project_id, visitor_id));

CREATE VIEW IF NOT EXISTS visitor_customers ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    visitor_id,
    argMax(customer_id, (timestamp, received_at, id)) AS customer_id,
    min(timestamp) AS first_identified_at
FROM identities
FINAL
WHERE visitor_id != ''
GROUP BY
    project_id,
    visitor_id;

CREATE VIEW IF NOT EXISTS session_customers ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    session_id,
    argMax(customer_id, (timestamp, received_at, id)) AS customer_id
FROM identities
FINAL
WHERE session_id != ''
GROUP BY
    project_id,
    session_id;
