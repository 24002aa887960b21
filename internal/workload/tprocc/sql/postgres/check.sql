-- Consistency conditions (TPC-C clause 3.3.2). Each block takes the
-- warehouse id as $1 and returns one number: how many rows or groups in that
-- warehouse break the condition, 0 when it holds.
--
-- Money is numeric here, so sums are exact and compared with no tolerance.
-- IS DISTINCT FROM makes a NULL where a number belongs count as a violation
-- instead of silently comparing as unknown.
--
-- The per-order and per-customer conditions aggregate each table by its key
-- first and then join the aggregates: a few hash or merge joins over a
-- warehouse's rows, rather than one probe per order or customer.

-- 3.3.2.1: the warehouse's YTD is the sum of its districts' YTD.
-- name: cond1
SELECT count(*) FROM warehouse
WHERE w_id = $1
  AND w_ytd IS DISTINCT FROM (SELECT coalesce(sum(d_ytd), 0) FROM district WHERE d_w_id = $1)

-- 3.3.2.2: per district, the last order id handed out is the highest order
-- and, when the district has undelivered orders, the highest new order.
-- name: cond2
WITH o AS (SELECT o_d_id AS d, max(o_id) AS m FROM orders WHERE o_w_id = $1 GROUP BY o_d_id),
     n AS (SELECT no_d_id AS d, max(no_o_id) AS m FROM new_order WHERE no_w_id = $1 GROUP BY no_d_id)
SELECT count(*) FROM district
LEFT JOIN o ON o.d = d_id
LEFT JOIN n ON n.d = d_id
WHERE d_w_id = $1
  AND (d_next_o_id - 1 IS DISTINCT FROM coalesce(o.m, 0)
       OR (n.m IS NOT NULL AND n.m IS DISTINCT FROM d_next_o_id - 1))

-- 3.3.2.6: each order's O_OL_CNT is the number of its lines. The full join
-- also counts an order with no lines and lines with no order.
-- name: cond6
WITH l AS (SELECT ol_d_id AS d, ol_o_id AS o, count(*) AS n
           FROM order_line WHERE ol_w_id = $1 GROUP BY ol_d_id, ol_o_id),
     o AS (SELECT o_d_id AS d, o_id AS o, o_ol_cnt AS n FROM orders WHERE o_w_id = $1)
SELECT count(*) FROM o FULL JOIN l ON l.d = o.d AND l.o = o.o
WHERE o.n IS DISTINCT FROM l.n

-- 3.3.2.8: the warehouse's YTD is the sum of the payments made to it.
-- name: cond8
SELECT count(*) FROM warehouse
WHERE w_id = $1
  AND w_ytd IS DISTINCT FROM (SELECT coalesce(sum(h_amount), 0) FROM history WHERE h_w_id = $1)

-- 3.3.2.9: each district's YTD is the sum of the payments made to it.
-- name: cond9
WITH h AS (SELECT h_d_id AS d, sum(h_amount) AS s FROM history WHERE h_w_id = $1 GROUP BY h_d_id)
SELECT count(*) FROM district LEFT JOIN h ON h.d = d_id
WHERE d_w_id = $1 AND d_ytd IS DISTINCT FROM coalesce(h.s, 0)

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
  AND c_balance IS DISTINCT FROM coalesce(oc.s, 0) - coalesce(h.s, 0)

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
  AND c_balance + c_ytd_payment IS DISTINCT FROM coalesce(oc.s, 0)
