-- WHERE: status filters every column (INDIRECT FILTER)
select o.order_id, o.customer_id, o.amount
from {{ ref('orders') }} as o
where o.status = 'paid'
