-- One category's sales, Σ quantity × price over its order lines, in the
-- anchor's month, quarter and half-year: $1 the category, $2..$4 the first
-- days of the month, the quarter and the half-year, $5 the anchor (the
-- loaded data's latest order date, so that new orders from a run, dated
-- today, stay out).
-- name: report
SELECT coalesce(sum(CASE WHEN ol.orderdate >= $2 THEN ol.quantity * p.price END), 0),
       coalesce(sum(CASE WHEN ol.orderdate >= $3 THEN ol.quantity * p.price END), 0),
       coalesce(sum(ol.quantity * p.price), 0)
FROM ds_orderlines ol JOIN ds_products p ON p.prod_id = ol.prod_id
WHERE p.category = $1 AND ol.orderdate >= $4 AND ol.orderdate <= $5
