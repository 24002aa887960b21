-- name: call:report
CALL ds_category_sales($1, $2, $3, $4, $5)
