-- MRR movements as revenue-metrics.md defines them, one row per revenue record that changed its
-- customer's MRR, for dashboards to read with SQL. The revenue consumer keeps this table: after every
-- batch it recomputes the movements of each customer the batch touched from that customer's whole
-- history (packages/warehouse/src/reports/mrr-table.ts, the same fold as `tally report mrr`), so a record
-- that arrives late or out of order re-classifies the movements after it. A movement that no longer
-- exists is written again with is_deleted = 1; ReplacingMergeTree keeps the highest version per key and
-- FINAL drops the deleted ones. Read it through mrr_movements_current.
CREATE TABLE IF NOT EXISTS mrr_movements
(
    project_id LowCardinality(String),
    customer_id String,
    transaction_id String,
    currency LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    movement LowCardinality(String),
    amount Decimal(38, 6),
    mrr_before Decimal(38, 6),
    mrr_after Decimal(38, 6),
    version UInt64,
    is_deleted UInt8
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY (project_id, customer_id, transaction_id);

-- The movements as they stand: new, expansion, reactivation, contraction or churn, with its size
-- (always positive) and the customer's MRR before and after, in the record's currency.
CREATE VIEW IF NOT EXISTS mrr_movements_current AS
SELECT project_id, customer_id, transaction_id, currency, timestamp, movement, amount, mrr_before, mrr_after
FROM mrr_movements FINAL;

-- Per project, currency and calendar month (UTC) with at least one movement: the movements' sums, net
-- new MRR, MRR at the start and end of the month (MRR carries unchanged through months without a
-- movement, which have no row), paying customers at the end, the revenue churn rates and ARPA (null when
-- the denominator is 0). Customer (logo) churn needs each customer's state at both ends of the month:
-- `tally report mrr` gives it.
CREATE VIEW IF NOT EXISTS mrr_monthly AS
SELECT
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
    if(mrr_start = 0, NULL, toFloat64(churn + contraction - expansion - reactivation) / toFloat64(mrr_start))
        AS net_revenue_churn_rate,
    customers_end,
    if(customers_end = 0, NULL, toFloat64(mrr_end) / customers_end) AS arpa
FROM
(
    SELECT
        project_id, currency, month, new, expansion, reactivation, contraction, churn, net_new,
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
            toInt64(countIf(movement IN ('new', 'reactivation'))) - toInt64(countIf(movement = 'churn'))
                AS customers_delta
        FROM mrr_movements FINAL
        GROUP BY project_id, currency, month
    )
    WINDOW w AS (PARTITION BY project_id, currency ORDER BY month ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
);
