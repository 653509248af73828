-- identify records: a visitor (fingerprint, session) is a customer from that moment on. Stored as they
-- come and never applied to the events table: the views below attribute events to customers at read
-- time, so history is never rewritten and a later identify re-attributes earlier anonymous events.
CREATE TABLE IF NOT EXISTS identities
(
    project_id LowCardinality(String),
    id String,
    timestamp DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    received_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    visitor_id String,
    visitor_id_derived Bool,
    session_id String,
    customer_id String,
    user_agent String CODEC(ZSTD(3)),
    extra String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, visitor_id, id);

-- Each identified visitor's customer: the customer of their latest identify (by the record's own time).
CREATE VIEW IF NOT EXISTS visitor_customers AS
SELECT
    project_id,
    visitor_id,
    argMax(customer_id, (timestamp, received_at, id)) AS customer_id,
    min(timestamp) AS first_identified_at
FROM identities FINAL
WHERE visitor_id != ''
GROUP BY project_id, visitor_id;

-- Each identified session's customer (sessions outlive a derived visitor id, which rotates daily).
CREATE VIEW IF NOT EXISTS session_customers AS
SELECT
    project_id,
    session_id,
    argMax(customer_id, (timestamp, received_at, id)) AS customer_id
FROM identities FINAL
WHERE session_id != ''
GROUP BY project_id, session_id;
