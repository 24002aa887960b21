-- Consistency conditions (TPC-C clause 3.3.2) that read the same in every
-- dialect; each dialect's check.sql has the rest, written for its planner
-- and its money type. Each block takes the warehouse id as $1 and returns
-- one number: how many rows or groups in that warehouse break the
-- condition, 0 when it holds.

-- 3.3.2.4: per district, the orders' line counts add up to the lines there
-- are. A district with lines but no orders, or the reverse, counts too.
-- name: cond4
WITH o AS (SELECT o_d_id AS d, sum(o_ol_cnt) AS n FROM orders WHERE o_w_id = $1 GROUP BY o_d_id),
     l AS (SELECT ol_d_id AS d, count(*) AS n FROM order_line WHERE ol_w_id = $1 GROUP BY ol_d_id)
SELECT count(*) FROM o FULL JOIN l ON l.d = o.d
WHERE coalesce(o.n, 0) <> coalesce(l.n, 0)

-- 3.3.2.5: an order has no carrier exactly when it has a new_order row.
-- A new_order row whose order is missing counts as well.
-- name: cond5
SELECT
  (SELECT count(*) FROM orders
   LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
   WHERE o_w_id = $1 AND (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL))
+ (SELECT count(*) FROM new_order
   WHERE no_w_id = $1
     AND NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id))

-- Orders the build loads undelivered have ids above 2100; a carrier on one
-- of them means Delivery has run in this warehouse.
-- name: delivered
SELECT count(*) FROM orders WHERE o_w_id = $1 AND o_id > 2100 AND o_carrier_id IS NOT NULL
