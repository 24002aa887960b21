-- name: call:report
SELECT month, quarter, half FROM ds_category_sales($1, $2, $3, $4, $5)
