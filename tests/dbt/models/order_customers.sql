-- JOIN: the join keys (INDIRECT JOIN)
select o.order_id, c.name as customer_name
from {{ ref('orders') }} as o
join {{ ref('customers') }} as c on o.customer_id = c.id
