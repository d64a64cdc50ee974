-- Renames stated by DDL (Spark SQL), beside a statement with lineage: `fieldgraph sql` writes each rename as one,
-- so the lineage of the old names carries over to the new ones.
ALTER TABLE mart.daily_revenue RENAME COLUMN revenue TO gross_revenue;
ALTER TABLE shop.customers CHANGE COLUMN email email_address STRING;
INSERT INTO mart.country_buyers SELECT country, COUNT(DISTINCT customer_id) AS buyers FROM customers GROUP BY country;
ALTER TABLE shop.orders RENAME TO shop.orders_v2;
