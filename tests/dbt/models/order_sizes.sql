-- CASE: the condition's column (INDIRECT CONDITIONAL), the values' (DIRECT)
select o.order_id, case when o.amount > 100 then o.status else 'small' end as size
from {{ ref('orders') }} as o
