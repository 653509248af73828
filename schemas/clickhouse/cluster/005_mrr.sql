-- Generated from schemas/clickhouse/005_mrr.sql by `npm run schema:cluster`: do not edit.
-- source sha256: 76d74631907555e497c654b3f9f5a019b8beea349112c84dfd22f40e76f16f93
-- What the migrations run when CLICKHOUSE_CLUSTER is set, __TALLY_CLUSTER__ and __TALLY_DATABASE__
-- replaced by the cluster and the database (ARCHITECTURE.md, "A ClickHouse cluster").

CREATE TABLE IF NOT EXISTS mrr_movements_local ON CLUSTER __TALLY_CLUSTER__
(
    `project_id` LowCardinality(String),
    `customer_id` String,
    `transaction_id` String,
    `currency` LowCardinality(String),
    `timestamp` DateTime64(3, 'UTC'),
    `movement` LowCardinality(String),
    `amount` Decimal(38, 6),
    `mrr_before` Decimal(38, 6),
    `mrr_after` Decimal(38, 6),
    `version` UInt64,
    `is_deleted` UInt8
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', version, is_deleted)
ORDER BY (project_id, customer_id, transaction_id);

CREATE TABLE IF NOT EXISTS mrr_movements ON CLUSTER __TALLY_CLUSTER__ AS mrr_movements_local
ENGINE = Distributed(__TALLY_CLUSTER__, __TALLY_DATABASE__, mrr_movements_local, cityHash64(project_id, customer_id));

CREATE VIEW IF NOT EXISTS mrr_movements_current ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    customer_id,
    transaction_id,
    currency,
    timestamp,
    movement,
    amount,
    mrr_before,
    mrr_after
FROM mrr_movements
FINAL;

CREATE VIEW IF NOT EXISTS mrr_monthly ON CLUSTER __TALLY_CLUSTER__
AS SELECT
    project_id,
    currency,
    month,
    mrr_end - net_new AS mrr_start,
    new,
    expansion,
    reactivation,
    contraction,
    churn,
    mrr_end,
    net_new,
    if(mrr_start = 0, NULL, toFloat64(churn + contraction) / toFloat64(mrr_start)) AS gross_revenue_churn_rate,
    if(mrr_start = 0, NULL, toFloat64(((churn + contraction) - expansion) - reactivation) / toFloat64(mrr_start)) AS net_revenue_churn_rate,
    customers_end,
    if(customers_end = 0, NULL, toFloat64(mrr_end) / customers_end) AS arpa
FROM
(
    SELECT
        project_id,
        currency,
        month,
        new,
        expansion,
        reactivation,
        contraction,
        churn,
        net_new,
        sum(net_new) OVER w AS mrr_end,
        sum(customers_delta) OVER w AS customers_end
    FROM
    (
        SELECT
            project_id,
            currency,
            toStartOfMonth(timestamp) AS month,
            sumIf(amount, movement = 'new') AS new,
            sumIf(amount, movement = 'expansion') AS expansion,
            sumIf(amount, movement = 'reactivation') AS reactivation,
            sumIf(amount, movement = 'contraction') AS contraction,
            sumIf(amount, movement = 'churn') AS churn,
            sum(mrr_after - mrr_before) AS net_new,
            toInt64(countIf(movement IN ('new', 'reactivation'))) - toInt64(countIf(movement = 'churn')) AS customers_delta
        FROM mrr_movements
        FINAL
        GROUP BY
            project_id,
            currency,
            month
    )
    WINDOW w AS (PARTITION BY project_id, currency ORDER BY month ASC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
);
