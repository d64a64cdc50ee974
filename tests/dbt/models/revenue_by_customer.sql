-- GROUP BY and an aggregate (INDIRECT GROUP_BY, DIRECT AGGREGATION)
select p.customer_id, sum(p.amount) as revenue
from {{ ref('paid_orders') }} as p
group by p.customer_id
