-- What the consumers keep beside the records, bounded so that a batch costs the same whatever the history.
--
-- visit_durations: the longest visit of each project (ms). A batch's visits are refreshed from the stored
-- visits that may reach its records; a visit may start as long before a record as the project's longest
-- visit, and reading that bound from the visits themselves (max(duration_ms)) scanned the project's whole
-- history at every batch. The consumer records a project's longest visit here before it writes a longer
-- one, so the bound read here is never too short. One row per project once merged (the version is the
-- duration: the longest is kept).
CREATE TABLE IF NOT EXISTS visit_durations
(
    project_id LowCardinality(String),
    longest_ms UInt64
)
ENGINE = ReplacingMergeTree(longest_ms)
ORDER BY project_id;

INSERT INTO visit_durations (project_id, longest_ms)
SELECT project_id, max(duration_ms) FROM visits GROUP BY project_id;

-- record_ids: a record's id is kept 35 days after it landed (RECORD_IDS_KEPT_DAYS in
-- packages/warehouse/src/record-ids.ts): the window in which a copy of a record is recognised and stored no
-- more. The record log keeps records far less long (LOG_RETENTION_HOURS, Kafka's retention.ms), so a
-- redelivery always finds the id, and a client retries within minutes. Counted from when the id was
-- stored, not from the record's own time (a record may be dated long before it arrives). Ids stored before
-- this migration are kept 35 days from their first merge after it.
ALTER TABLE record_ids ADD COLUMN IF NOT EXISTS landed_at DateTime DEFAULT now();
ALTER TABLE record_ids MODIFY TTL landed_at + INTERVAL 35 DAY;
