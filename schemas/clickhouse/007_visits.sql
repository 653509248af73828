-- What the dashboard needs beyond the records as they were: the country the gateway looked up from the
-- client's IP (never the IP) and the screen width @tally/core sends with pageviews, on every new row of
-- events; and the visits table, from which every traffic figure of the dashboard is read.
ALTER TABLE events ADD COLUMN IF NOT EXISTS country LowCardinality(String) AFTER locale;
ALTER TABLE events ADD COLUMN IF NOT EXISTS screen_width UInt16 AFTER country;

-- Visits as dashboard.md defines them: the pageviews and custom events of one visitor in one project with
-- no gap of 30 minutes or more, bots left out. Kept by the analytics consumer: after each batch it folds
-- again, with the fold of packages/warehouse/src/reports/visits.ts, the batch's records of each visitor
-- together with that visitor's stored visits within 30 minutes of them (reports/visits-table.ts); a visit
-- that no longer exists (two visits joined by a late record) is written again with is_deleted = 1.
-- ReplacingMergeTree keeps the highest version per key and FINAL drops the deleted ones, so a redelivered
-- batch replaces the same visits, never adds to them. Read with FINAL.
-- One row per visit, with its attributes (those of its entry pageview) and, as arrays in time order, the
-- record id, time and path of each pageview and the record id, time, name and properties of each custom
-- event: every panel (pages included) reads this table alone, figures by record time stay exact, and a
-- visit can be folded again from its row (the ids make a record count once).
CREATE TABLE IF NOT EXISTS visits
(
    project_id LowCardinality(String),
    visitor_id String,
    -- Unique visitors are counted over this 128-bit hash (fixed-size keys count several times faster than
    -- strings): two visitors count as one only if their ids' SipHash-128 collide, a chance of about
    -- n^2 / 2^129 (10^-27 for a million visitors), the assurance record ids have as UUIDs.
    visitor_hash UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(visitor_id)),
    start DateTime64(3, 'UTC'),
    end DateTime64(3, 'UTC'),
    pageviews UInt32,
    events UInt32,
    is_bounce Bool,
    duration_ms UInt64,
    entry_path String,
    exit_path String,
    hostname LowCardinality(String),
    source LowCardinality(String),
    referrer String,
    channel LowCardinality(String),
    utm_source LowCardinality(String),
    utm_medium LowCardinality(String),
    utm_campaign LowCardinality(String),
    utm_term String,
    utm_content String,
    country LowCardinality(String),
    browser LowCardinality(String),
    os LowCardinality(String),
    device_type LowCardinality(String),
    screen_size LowCardinality(String),
    pageview_ids Array(String) CODEC(ZSTD(1)),
    pageview_times Array(DateTime64(3, 'UTC')),
    pageview_paths Array(LowCardinality(String)),
    event_ids Array(String) CODEC(ZSTD(1)),
    event_times Array(DateTime64(3, 'UTC')),
    event_names Array(LowCardinality(String)),
    event_data Array(Map(String, String)),
    version UInt64,
    is_deleted UInt8
)
ENGINE = ReplacingMergeTree(version, is_deleted)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, toDate(start), visitor_id, start);
