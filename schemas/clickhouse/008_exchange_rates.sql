-- Exchange rates the operator loads with `tally revenue rates load FILE.csv` (never fetched by Tally):
-- one unit of `currency` is `rate` units of `base`, for a month (period YYYY-MM) or a day (YYYY-MM-DD).
-- The rate is kept as the decimal text that was loaded, so conversions multiply by exactly that number
-- (packages/warehouse/src/reports/exchange-rates.ts). Rates are the operator's, shared by every project.
-- Loading a rate again for the same base, currency and period replaces it: the latest load wins (FINAL).
CREATE TABLE IF NOT EXISTS exchange_rates
(
    base LowCardinality(String),
    currency LowCardinality(String),
    period String,
    rate String,
    loaded_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(loaded_at)
ORDER BY (base, currency, period);
