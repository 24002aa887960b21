-- Consistency conditions (TPC-C clause 3.3.2) as most dialects write them;
-- a dialect's check.sql replaces those its planner or its money type wants
-- written otherwise. Each block takes the warehouse id as $1 and returns
-- one number: how many rows or groups in that warehouse break the
-- condition, 0 when it holds.
--
-- Money is exact here (numeric, DECIMAL), so sums are compared with no
-- tolerance. coalesce(a <> b, true) counts a NULL where a number belongs
-- as a violation instead of letting the comparison be unknown; b is never
-- NULL, so it reads as IS DISTINCT FROM, which not every dialect has.

-- 3.3.2.1: the warehouse's YTD is the sum of its districts' YTD.
-- name: cond1
SELECT count(*) FROM warehouse
WHERE w_id = $1
  AND coalesce(w_ytd <> (SELECT coalesce(sum(d_ytd), 0) FROM district WHERE d_w_id = $1), true)

-- 3.3.2.2: per district, the last order id handed out is the highest order
-- and, when the district has undelivered orders, the highest new order.
-- name: cond2
WITH o AS (SELECT o_d_id AS d, max(o_id) AS m FROM orders WHERE o_w_id = $1 GROUP BY o_d_id),
     n AS (SELECT no_d_id AS d, max(no_o_id) AS m FROM new_order WHERE no_w_id = $1 GROUP BY no_d_id)
SELECT count(*) FROM district
LEFT JOIN o ON o.d = d_id
LEFT JOIN n ON n.d = d_id
WHERE d_w_id = $1
  AND coalesce(d_next_o_id - 1 <> coalesce(o.m, 0) OR (n.m IS NOT NULL AND n.m <> d_next_o_id - 1), true)

-- 3.3.2.3: per district, the new orders form an unbroken run of ids.
-- name: cond3
SELECT count(*) FROM (
  SELECT max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n
  FROM new_order WHERE no_w_id = $1 GROUP BY no_d_id) x
WHERE span <> n

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

-- 3.3.2.7: an order without a carrier has no delivered line, and an order
-- with one has every line delivered.
-- name: cond7
WITH l AS (SELECT ol_d_id AS d, ol_o_id AS o, count(*) AS n, count(ol_delivery_d) AS delivered
           FROM order_line WHERE ol_w_id = $1 GROUP BY ol_d_id, ol_o_id)
SELECT count(*) FROM orders JOIN l ON l.d = o_d_id AND l.o = o_id
WHERE o_w_id = $1
  AND CASE WHEN o_carrier_id IS NULL THEN l.delivered > 0 ELSE l.delivered < l.n END

-- 3.3.2.8: the warehouse's YTD is the sum of the payments made to it.
-- name: cond8
SELECT count(*) FROM warehouse
WHERE w_id = $1
  AND coalesce(w_ytd <> (SELECT coalesce(sum(h_amount), 0) FROM history WHERE h_w_id = $1), true)

-- 3.3.2.9: each district's YTD is the sum of the payments made to it.
-- name: cond9
WITH h AS (SELECT h_d_id AS d, sum(h_amount) AS s FROM history WHERE h_w_id = $1 GROUP BY h_d_id)
SELECT count(*) FROM district LEFT JOIN h ON h.d = d_id
WHERE d_w_id = $1 AND coalesce(d_ytd <> coalesce(h.s, 0), true)

-- 3.3.2.10: each customer's balance is what was delivered to them less what
-- they paid. Delivered lines are summed per order, then per customer
-- through the order's O_C_ID; payments per customer through H_C_*.
-- name: cond10
WITH ol AS (SELECT ol_d_id AS d, ol_o_id AS o, sum(ol_amount) AS s FROM order_line
            WHERE ol_w_id = $1 AND ol_delivery_d IS NOT NULL GROUP BY ol_d_id, ol_o_id),
     oc AS (SELECT o_d_id AS d, o_c_id AS c, sum(ol.s) AS s FROM orders
            JOIN ol ON ol.d = o_d_id AND ol.o = o_id
            WHERE o_w_id = $1 GROUP BY o_d_id, o_c_id),
     h AS (SELECT h_c_d_id AS d, h_c_id AS c, sum(h_amount) AS s FROM history
           WHERE h_c_w_id = $1 GROUP BY h_c_d_id, h_c_id)
SELECT count(*) FROM customer
LEFT JOIN oc ON oc.d = c_d_id AND oc.c = c_id
LEFT JOIN h ON h.d = c_d_id AND h.c = c_id
WHERE c_w_id = $1
  AND coalesce(c_balance <> coalesce(oc.s, 0) - coalesce(h.s, 0), true)

-- 3.3.2.11: per district, the orders outnumber the new orders by the 2100
-- orders the build loads as delivered. Delivery breaks it by design, so
-- the check skips it once the `delivered` block finds a delivery.
-- name: cond11
WITH o AS (SELECT o_d_id AS d, count(*) AS n FROM orders WHERE o_w_id = $1 GROUP BY o_d_id),
     n AS (SELECT no_d_id AS d, count(*) AS n FROM new_order WHERE no_w_id = $1 GROUP BY no_d_id)
SELECT count(*) FROM district
LEFT JOIN o ON o.d = d_id
LEFT JOIN n ON n.d = d_id
WHERE d_w_id = $1 AND coalesce(o.n, 0) - coalesce(n.n, 0) <> 2100

-- 3.3.2.12: each customer's balance plus what they paid is what was
-- delivered to them.
-- name: cond12
WITH ol AS (SELECT ol_d_id AS d, ol_o_id AS o, sum(ol_amount) AS s FROM order_line
            WHERE ol_w_id = $1 AND ol_delivery_d IS NOT NULL GROUP BY ol_d_id, ol_o_id),
     oc AS (SELECT o_d_id AS d, o_c_id AS c, sum(ol.s) AS s FROM orders
            JOIN ol ON ol.d = o_d_id AND ol.o = o_id
            WHERE o_w_id = $1 GROUP BY o_d_id, o_c_id)
SELECT count(*) FROM customer
LEFT JOIN oc ON oc.d = c_d_id AND oc.c = c_id
WHERE c_w_id = $1
  AND coalesce(c_balance + c_ytd_payment <> coalesce(oc.s, 0), true)

-- Orders the build loads undelivered have ids above 2100; a carrier on one
-- of them means Delivery has run in this warehouse.
-- name: delivered
SELECT count(*) FROM orders WHERE o_w_id = $1 AND o_id > 2100 AND o_carrier_id IS NOT NULL
