-- Nightly mart load (Spark SQL): revenue per day and country, paid orders only.
WITH paid AS (
  SELECT o.order_id, o.customer_id, CAST(o.order_ts AS DATE) AS sale_date, o.amount
  FROM orders o
  WHERE o.status = 'paid'
)
INSERT INTO mart.daily_revenue
SELECT p.sale_date, c.country, SUM(p.amount) AS revenue, COUNT(DISTINCT c.email) AS buyers
FROM paid p
JOIN customers c ON p.customer_id = c.customer_id
GROUP BY p.sale_date, c.country;
