-- Every category's sales in a kept report's windows, recomputed for
-- `dbrig check --result`: written apart from report.sql, it reads each
-- line's date from its order, and counts only the orders the build
-- loaded. $1..$3 are the first days of the month, the quarter and the
-- half-year, $4 the last day, $5 the last loaded order id. A category
-- without sales in the half-year has no row.
-- name: category_sales
SELECT p.category,
       sum(CASE WHEN o.orderdate >= $1 THEN l.quantity * p.price ELSE 0 END),
       sum(CASE WHEN o.orderdate >= $2 THEN l.quantity * p.price ELSE 0 END),
       sum(l.quantity * p.price)
FROM ds_orders o
JOIN ds_orderlines l ON l.orderid = o.orderid
JOIN ds_products p ON p.prod_id = l.prod_id
WHERE o.orderid <= $5 AND o.orderdate BETWEEN $3 AND $4
GROUP BY p.category
