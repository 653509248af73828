-- The migrations applied, one row per numbered file of this directory, created before any of them runs
-- (packages/warehouse/src/migrations.ts). ReplacingMergeTree by version: a migration recorded twice (two
-- migrators before the migration lock existed) is one row, read with FINAL.
CREATE TABLE IF NOT EXISTS schema_migrations
(
    version UInt32,
    name String,
    checksum String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
ORDER BY version;
