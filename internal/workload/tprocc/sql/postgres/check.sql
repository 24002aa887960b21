-- PostgreSQL's consistency condition beyond generic/check.sql (which see
-- for what a block takes and returns): 3.3.2.6, per order, as a FULL JOIN
-- of both sides' aggregates, one hash or merge join over a warehouse's
-- rows rather than one probe per order. IS DISTINCT FROM makes a NULL
-- where a number belongs count as a violation.

-- 3.3.2.6: each order's O_OL_CNT is the number of its lines. The full join
-- also counts an order with no lines and lines with no order.
-- name: cond6
WITH l AS (SELECT ol_d_id AS d, ol_o_id AS o, count(*) AS n
           FROM order_line WHERE ol_w_id = $1 GROUP BY ol_d_id, ol_o_id),
     o AS (SELECT o_d_id AS d, o_id AS o, o_ol_cnt AS n FROM orders WHERE o_w_id = $1)
SELECT count(*) FROM o FULL JOIN l ON l.d = o.d AND l.o = o.o
WHERE o.n IS DISTINCT FROM l.n

-- A note for dbrig check to print when it says something: here, that the
-- server will log each intended rollback (see tprocc_quiet in procs.sql).
-- name: note
SELECT CASE WHEN NOT tprocc_quiet() THEN
  'each intended rollback (1% of New-Orders) will log an ERROR: this role may not set '
  || 'log_min_messages and log_min_error_statement (a superuser may, and on PostgreSQL 15+ '
  || 'a role granted SET ON PARAMETER for both)' END
