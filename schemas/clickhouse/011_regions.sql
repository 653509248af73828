-- Where a visitor was beyond its country: the region (first-level subdivision: a state, a region) and the
-- city the gateway looked up from the client's IP (GEO_DATABASE=city; never the IP), on every new row of
-- events and visits. Empty for older rows and with GEO_DATABASE=country. A visit's are its entry
-- pageview's, as its country is.
ALTER TABLE events ADD COLUMN IF NOT EXISTS region LowCardinality(String) AFTER country;
ALTER TABLE events ADD COLUMN IF NOT EXISTS city LowCardinality(String) AFTER region;
ALTER TABLE visits ADD COLUMN IF NOT EXISTS region LowCardinality(String) AFTER country;
ALTER TABLE visits ADD COLUMN IF NOT EXISTS city LowCardinality(String) AFTER region;
