-- PostgreSQL's additions to generic/tx.sql, and the blocks it writes its own way.

-- New-Order's lines and Delivery's districts as sets: one statement for
-- all the lines (or districts) where generic/tx.sql has one a line (or a
-- district), so the client takes a few results a transaction rather than
-- two a line. The lines arrive as int4 arrays in the client's order
-- (sorted, the unused item last); unnest ... WITH ORDINALITY numbers them
-- from 1, and a read's row says which line it answers. A line whose item
-- is missing gets no row.
--
-- A set form that reads and locks rows is followed by its write: block,
-- which takes the same arguments. PostgreSQL prepares a statement with as
-- many parameters as it names, so a block names the arguments it does not
-- use in a condition that always holds (IS NOT NULL): a generic plan
-- evaluates it once.

-- New-Order's district, order and new-order row in one statement: the
-- district's update takes the order number, as no_district does, and the
-- order and its new-order row are inserted with it, as no_order and
-- no_new_order insert them. The client needs no answer between them, so
-- they go in the batch with the customer, the items and the stock. $1 the
-- warehouse, $2 the district, $3 the customer, $4 the entry date, $5 the
-- lines, $6 1 if all are local.
-- name: no_district_order
WITH d AS (
  UPDATE district SET d_next_o_id = d_next_o_id + 1
   WHERE d_w_id = $1 AND d_id = $2
  RETURNING d_tax, d_next_o_id - 1 AS o_id
), o AS (
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  SELECT o_id, $2, $1, $3::int, $4::timestamp, NULL, $5::int, $6::int FROM d
), n AS (
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) SELECT o_id, $2, $1 FROM d
)
SELECT d_tax, o_id FROM d

-- Prices cross the wire as float8 (see call:neword); order lines take
-- their amounts from the item on the server, in numeric.
-- name: no_items
SELECT l.n, i_price::float8, i_name, i_data
  FROM unnest($1::int[]) WITH ORDINALITY l(i, n)
  JOIN item ON i_id = l.i

-- $1 the supplying warehouses, $2 the items, $3 the district whose
-- s_dist_XX goes into the order lines, $4 the quantities, $5 the home
-- warehouse. LockRows sits above the sort on the line, so the stock rows
-- lock line by line in the client's order, as a statement a line would
-- lock them, and New-Orders still take stock in one global order.
-- name: no_stocks
SELECT l.n, s_quantity,
  CASE $3::int WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
    WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
    WHEN 9 THEN s_dist_09 ELSE s_dist_10 END,
  s_data
  FROM unnest($2::int[], $1::int[], $4::int[]) WITH ORDINALITY l(i, w, q, n)
  JOIN stock ON s_w_id = l.w AND s_i_id = l.i
 WHERE $5::int IS NOT NULL
 ORDER BY l.n
   FOR UPDATE OF stock

-- UPDATE ... FROM changes a row once however many lines join it, so the
-- client sends this only when no two lines share an item and a
-- warehouse, and else each line's write:no_stock.
-- name: write:no_stocks
UPDATE stock SET
  s_quantity = CASE WHEN s_quantity >= l.q + 10 THEN s_quantity - l.q ELSE s_quantity - l.q + 91 END,
  s_ytd = s_ytd + l.q, s_order_cnt = s_order_cnt + 1,
  s_remote_cnt = s_remote_cnt + CASE WHEN l.w = $5::int THEN 0 ELSE 1 END
  FROM unnest($2::int[], $1::int[], $4::int[]) l(i, w, q)
 WHERE s_w_id = l.w AND s_i_id = l.i AND $3::int IS NOT NULL

-- $1 the order, $2 its district, $3 its warehouse, $4 the items, $5 their
-- supplying warehouses, $6 the quantities. Each line's amount and
-- s_dist_XX are the ones the client read, from the item and the stock row
-- this transaction holds.
-- name: no_lines
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT $1::int, $2::int, $3::int, l.n, l.i, l.w, NULL, l.q, l.q * i_price,
  CASE $2::int WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
    WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
    WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
  FROM unnest($4::int[], $5::int[], $6::int[]) WITH ORDINALITY l(i, w, q, n)
  JOIN item ON i_id = l.i
  JOIN stock ON s_w_id = l.w AND s_i_id = l.i

-- Payment's history row, its h_data the warehouse's and the district's
-- names as the client would join them, read from the rows this
-- transaction has updated: the client need not wait for them. $1-$5 the
-- customer, its district and warehouse, the district and the warehouse,
-- $6 the date, $7 the amount.
-- name: pay_history_named
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
SELECT $1::int, $2::int, $3::int, $4::int, $5::int, $6::timestamp, $7::numeric, w_name || '    ' || d_name
  FROM warehouse JOIN district ON d_w_id = w_id
 WHERE w_id = $5 AND d_id = $4

-- Delivery (clause 2.7). The oldest new order is taken by a locking read
-- inside the delete: one that waits for a concurrent Delivery holding the
-- oldest then skips the row that one deleted and locks the next, so a
-- Delivery does not lose the race. generic/tx.sql's delete, which returns
-- nothing once the row it waited for is gone, sends it back to that
-- district after it holds the later ones, an order two Deliveries of one
-- warehouse can deadlock in (dl_pending still tells an empty district).
-- name: dl_new_order
DELETE FROM new_order
 WHERE no_w_id = $1 AND no_d_id = $2
   AND no_o_id = (SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2
                   ORDER BY no_o_id LIMIT 1 FOR UPDATE)
RETURNING no_o_id

-- Delivery's orders, lines and customers, once each district's oldest new
-- order is taken. $1 the warehouse, $2 the districts with an order, $3
-- their orders, $4 the carrier, $5 the delivery date. Each update returns
-- what the transaction reads of the rows it changed, in one statement
-- where a locking read and its write would take two. No other
-- transaction locks an order or its lines once it has left new_order, so
-- the order these take their rows in is free.
-- name: dl_orders
UPDATE orders SET o_carrier_id = $4
  FROM unnest($2::int[], $3::int[]) d(d, o)
 WHERE o_w_id = $1 AND o_d_id = d.d AND o_id = d.o AND $5::timestamp IS NOT NULL
RETURNING o_d_id, o_c_id

-- name: dl_order_lines
UPDATE order_line SET ol_delivery_d = $5
  FROM unnest($2::int[], $3::int[]) d(d, o)
 WHERE ol_w_id = $1 AND ol_d_id = d.d AND ol_o_id = d.o AND $4::int IS NOT NULL
RETURNING ol_d_id, ol_amount::float8

-- $2 the districts, $3 their orders' customers, $4 the sums of their
-- lines in cents, which become numeric before the division (int / int
-- would truncate), so balances move by the exact amount.
-- name: dl_customers
UPDATE customer SET c_balance = c_balance + a.a::numeric / 100, c_delivery_cnt = c_delivery_cnt + 1
  FROM unnest($2::int[], $3::int[], $4::int[]) a(d, c, a)
 WHERE c_w_id = $1 AND c_d_id = a.d AND c_id = a.c

-- The server-side transactions of procs.sql: one statement, one round trip.
-- name: call:neword
-- Money crosses the wire as float8: pgx turns numeric into and out of
-- float64 through text and big.Int, which cost the client about a tenth
-- of its CPU per transaction.
SELECT order_id, total_amount::float8 FROM tprocc_neword($1, $2, $3, $4, $5, $6, $7)

-- name: call:payment
SELECT cust_id, cust_balance::float8 FROM tprocc_payment($1, $2, $3, $4, $5, $6, $7, $8::float8::numeric, $9)

-- name: call:ostat
SELECT cust_id, coalesce(order_id, 0), coalesce(cardinality(line_items), 0) FROM tprocc_ostat($1, $2, $3, $4, $5)

-- name: call:delivery
SELECT tprocc_delivery($1, $2, $3)

-- name: call:slev
SELECT tprocc_slev($1, $2, $3)
