-- The MySQL family's consistency conditions beyond generic/check.sql
-- (which see for what a block takes and returns). There is no FULL JOIN:
-- where the generic block has one, the rows of one side that the other
-- lacks are counted on their own. NOT (a <=> b) is IS DISTINCT FROM: a
-- NULL where a number belongs counts as a violation.

-- 3.3.2.4: per district, the orders' line counts add up to the lines there
-- are. Each side's count goes into one sum, the lines' negated, so a
-- district with lines but no orders, or the reverse, counts too.
-- name: cond4
SELECT count(*) FROM (
  SELECT d, sum(n) AS diff FROM (
    SELECT o_d_id AS d, sum(o_ol_cnt) AS n FROM orders WHERE o_w_id = $1 GROUP BY o_d_id
    UNION ALL
    SELECT ol_d_id, -count(*) FROM order_line WHERE ol_w_id = $1 GROUP BY ol_d_id) u
  GROUP BY d) x
WHERE diff <> 0

-- 3.3.2.6: each order's O_OL_CNT is the number of its lines; an order with
-- no lines, and lines with no order, count too.
-- name: cond6
WITH l AS (SELECT ol_d_id AS d, ol_o_id AS o, count(*) AS n
           FROM order_line WHERE ol_w_id = $1 GROUP BY ol_d_id, ol_o_id)
SELECT
  (SELECT count(*) FROM orders LEFT JOIN l ON l.d = o_d_id AND l.o = o_id
   WHERE o_w_id = $1 AND NOT (o_ol_cnt <=> l.n))
+ (SELECT count(*) FROM l
   WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = $1 AND o_d_id = l.d AND o_id = l.o))
