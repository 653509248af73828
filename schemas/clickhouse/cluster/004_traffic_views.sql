-- Generated from schemas/clickhouse/004_traffic_views.sql by `npm run schema:cluster`: do not edit.
-- source sha256: 28f50071926511b53f2643e4b24e457a50ca7c0da1b6610be55721daa4a2cf81
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE VIEW IF NOT EXISTS events_attributed ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    e.*,
    if(s.session_customer != '', s.session_customer, v.visitor_customer) AS customer_id
FROM events AS e
FINAL
LEFT JOIN
(
    SELECT
        project_id AS s_project,
        session_id AS s_session,
        customer_id AS session_customer
    FROM session_customers
) AS s ON (s.s_project = e.project_id) AND (s.s_session = e.session_id)
LEFT JOIN
(
    SELECT
        project_id AS v_project,
        visitor_id AS v_visitor,
        customer_id AS visitor_customer
    FROM visitor_customers
) AS v ON (v.v_project = e.project_id) AND (v.v_visitor = e.visitor_id);

CREATE VIEW IF NOT EXISTS pageviews ON CLUSTER __TALLY_CLUSTER__
AS SELECT * EXCEPT (type, event_name, event_data)
FROM events_attributed
WHERE (type = 'pageview') AND (NOT is_bot);

CREATE VIEW IF NOT EXISTS custom_events ON CLUSTER __TALLY_CLUSTER__
AS SELECT * EXCEPT type
FROM events_attributed
WHERE (type = 'event') AND (NOT is_bot);

CREATE VIEW IF NOT EXISTS traffic_daily ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    toDate(timestamp) AS day,
    countIf(type = 'pageview') AS pageviews,
    countIf(type = 'event') AS events,
    uniqExact(visitor_id) AS visitors,
    uniqExact(session_id) AS sessions
FROM events
FINAL
WHERE NOT is_bot
GROUP BY
    project_id,
    day;

CREATE VIEW IF NOT EXISTS traffic_by_path ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    toDate(timestamp) AS day,
    path,
    count() AS pageviews,
    uniqExact(visitor_id) AS visitors,
    uniqExact(session_id) AS sessions
FROM events
FINAL
WHERE (type = 'pageview') AND (NOT is_bot)
GROUP BY
    project_id,
    day,
    path;

CREATE VIEW IF NOT EXISTS traffic_by_source ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    toDate(timestamp) AS day,
    referrer_source,
    utm_source,
    utm_medium,
    utm_campaign,
    count() AS pageviews,
    uniqExact(visitor_id) AS visitors,
    uniqExact(session_id) AS sessions
FROM events
FINAL
WHERE (type = 'pageview') AND (NOT is_bot)
GROUP BY
    project_id,
    day,
    referrer_source,
    utm_source,
    utm_medium,
    utm_campaign;

CREATE VIEW IF NOT EXISTS events_by_name ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    toDate(timestamp) AS day,
    event_name,
    count() AS events,
    uniqExact(visitor_id) AS visitors,
    uniqExact(session_id) AS sessions
FROM events
FINAL
WHERE (type = 'event') AND (NOT is_bot)
GROUP BY
    project_id,
    day,
    event_name;
