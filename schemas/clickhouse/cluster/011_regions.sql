-- Generated from schemas/clickhouse/011_regions.sql by `npm run schema:cluster`: do not edit.
-- source sha256: d115b909a7eca305ce55aa0e38c11e87541be99e75a56d88684f608b8217963d
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

ALTER TABLE events_local ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `region` LowCardinality(String) AFTER country);

ALTER TABLE events ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `region` LowCardinality(String) AFTER country);

ALTER TABLE events_local ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `city` LowCardinality(String) AFTER region);

ALTER TABLE events ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `city` LowCardinality(String) AFTER region);

ALTER TABLE visits_local ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `region` LowCardinality(String) AFTER country);

ALTER TABLE visits ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `region` LowCardinality(String) AFTER country);

ALTER TABLE visits_local ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `city` LowCardinality(String) AFTER region);

ALTER TABLE visits ON CLUSTER __TALLY_CLUSTER__
    (ADD COLUMN IF NOT EXISTS `city` LowCardinality(String) AFTER region);
