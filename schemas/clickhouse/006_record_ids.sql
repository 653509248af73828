-- Every record id a project has stored, whatever its type and however long apart its copies arrive: the
-- consumers look a batch's ids up here and store only records whose id is new, so the first copy of a
-- record wins for every type (the events table's key includes the record's day, so a copy dated another
-- day, such as a retry that crossed midnight, would otherwise be a second row). A consumer writes a
-- record's id here after the record itself: a crash in between leaves the id absent, and the redelivered
-- record is written again, identically, where ReplacingMergeTree keeps one row.
-- ReplacingMergeTree on (project_id, id), the earliest arrival kept (its version is higher), as in revenue.
CREATE TABLE IF NOT EXISTS record_ids
(
    project_id LowCardinality(String),
    id UUID,
    type LowCardinality(String),
    received_at DateTime64(3, 'UTC'),
    first_received_version UInt64 MATERIALIZED toUInt64(9007199254740991 - toUnixTimestamp64Milli(received_at))
)
ENGINE = ReplacingMergeTree(first_received_version)
ORDER BY (project_id, id);

-- The ids of the records stored before this table existed.
INSERT INTO record_ids (project_id, id, type, received_at)
SELECT project_id, toUUID(id), type, received_at FROM events WHERE isNotNull(toUUIDOrNull(id));

INSERT INTO record_ids (project_id, id, type, received_at)
SELECT project_id, toUUID(id), 'identify', received_at FROM identities WHERE isNotNull(toUUIDOrNull(id));

INSERT INTO record_ids (project_id, id, type, received_at)
SELECT project_id, toUUID(id), 'revenue', received_at FROM revenue WHERE isNotNull(toUUIDOrNull(id));
