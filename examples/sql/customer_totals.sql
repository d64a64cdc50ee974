-- a table created from a query whose second column has no alias: Spark names it sum(amount)
CREATE TABLE mart.customer_totals AS
SELECT customer_id, SUM(amount)
FROM shop.orders
GROUP BY customer_id;
