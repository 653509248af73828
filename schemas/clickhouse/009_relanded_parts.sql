-- Damaged parts the engine detached (system.detached_parts, reason broken*) whose records were landed again
-- from the record log by `tally warehouse reland`: a warehouse with a detached damaged part not listed here
-- has lost records, and Tally says so (readiness, a log line, the dashboard's health view) until it is.
CREATE TABLE IF NOT EXISTS relanded_parts
(
    table_name String,
    part String,
    reason String,
    relanded_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (table_name, part);
