-- The MySQL family's differences from generic/tx.sql.
--
-- There is no UPDATE ... RETURNING. Where the generic step updates rows
-- and returns them, the step here reads them with SELECT ... FOR UPDATE,
-- which locks them as the update would, and the write: block of the same
-- name then updates them: TPC-C's Appendix A does the same. A write: block
-- takes the same arguments as its step.

-- START TRANSACTION, not BEGIN, which inside a compound statement (the
-- target sends a batch as one BEGIN NOT ATOMIC ... END) opens a block.
-- name: begin_write
START TRANSACTION

-- The read-only transactions say so, and InnoDB gives them no
-- transaction id.
-- name: begin_read
START TRANSACTION READ ONLY

-- New-Order (clause 2.4).
-- name: no_district
SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2 FOR UPDATE

-- name: write:no_district
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2

-- $3 quantity, $4 1 if the supplying warehouse is remote, $5 the district
-- whose s_dist_XX goes into the order line.
-- name: no_stock
SELECT s_quantity,
  CASE $5 WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
    WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
    WHEN 9 THEN s_dist_09 ELSE s_dist_10 END,
  s_data
  FROM stock WHERE s_w_id = $1 AND s_i_id = $2 FOR UPDATE

-- name: write:no_stock
UPDATE stock SET
  s_quantity = CASE WHEN s_quantity >= $3 + 10 THEN s_quantity - $3 ELSE s_quantity - $3 + 91 END,
  s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $4
 WHERE s_w_id = $1 AND s_i_id = $2

-- New-Order's lines as sets, where the dialect has them: one statement for
-- all the lines' items, one for their stock, one for the stock updates and
-- one for the order lines, where the generic form has a statement a line
-- for each. The client takes two results a New-Order, not two a line, and
-- the server parses four statements. The lines arrive as JSON arrays in
-- the client's order (sorted, the unused item last), and a read's row says
-- which line it answers ($1 is 1-based); a line whose item is missing gets
-- no row.
-- name: no_items
SELECT l.n, i_price, i_name, i_data
  FROM JSON_TABLE($1, '$[*]' COLUMNS (n FOR ORDINALITY, i int PATH '$')) l
  JOIN item ON i_id = l.i

-- $1 the supplying warehouses, $2 the items, $3 the district whose
-- s_dist_XX goes into the order lines; $4 the quantities and $5 the home
-- warehouse are for write:no_stocks. The stock rows are locked as the join
-- reaches them, line by line in the client's order, as a statement a line
-- would lock them, so New-Orders still take stock in one global order.
-- name: no_stocks
SELECT l.n, s_quantity,
  CASE $3 WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
    WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
    WHEN 9 THEN s_dist_09 ELSE s_dist_10 END,
  s_data
  FROM JSON_TABLE($2, '$[*]' COLUMNS (n FOR ORDINALITY, i int PATH '$')) l
  JOIN JSON_TABLE($1, '$[*]' COLUMNS (n FOR ORDINALITY, w int PATH '$')) sw ON sw.n = l.n
  JOIN stock ON s_w_id = sw.w AND s_i_id = l.i
  FOR UPDATE

-- A multi-table UPDATE changes a row once however many lines join it, so
-- the client sends this only when no two lines share an item and a
-- warehouse, and else each line's write:no_stock.
-- name: write:no_stocks
UPDATE stock
  JOIN JSON_TABLE($2, '$[*]' COLUMNS (n FOR ORDINALITY, i int PATH '$')) l ON s_i_id = l.i
  JOIN JSON_TABLE($1, '$[*]' COLUMNS (n FOR ORDINALITY, w int PATH '$')) sw ON sw.n = l.n AND s_w_id = sw.w
  JOIN JSON_TABLE($4, '$[*]' COLUMNS (n FOR ORDINALITY, q int PATH '$')) q ON q.n = l.n
 SET s_quantity = CASE WHEN s_quantity >= q.q + 10 THEN s_quantity - q.q ELSE s_quantity - q.q + 91 END,
     s_ytd = s_ytd + q.q, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + (sw.w <> $5)

-- $1 the order, $2 its district, $3 its warehouse, $4 the items, $5 their
-- supplying warehouses, $6 the quantities. Each line's amount and
-- s_dist_XX are the ones the client read, from the item and the stock row
-- this transaction holds.
-- name: no_lines
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT $1, $2, $3, l.n, l.i, sw.w, NULL, q.q, q.q * i_price,
  CASE $2 WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
    WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
    WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
  FROM JSON_TABLE($4, '$[*]' COLUMNS (n FOR ORDINALITY, i int PATH '$')) l
  JOIN JSON_TABLE($5, '$[*]' COLUMNS (n FOR ORDINALITY, w int PATH '$')) sw ON sw.n = l.n
  JOIN JSON_TABLE($6, '$[*]' COLUMNS (n FOR ORDINALITY, q int PATH '$')) q ON q.n = l.n
  JOIN item ON i_id = l.i
  JOIN stock ON s_w_id = sw.w AND s_i_id = l.i

-- Payment (clause 2.5).
-- name: pay_warehouse
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = $1 FOR UPDATE

-- name: write:pay_warehouse
UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1

-- name: pay_district
SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district
 WHERE d_w_id = $1 AND d_id = $2 FOR UPDATE

-- name: write:pay_district
UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2

-- The warehouse and the district in one read, which locks both, where
-- the steps above take a result each; write:pay_warehouse and
-- write:pay_district follow it. Every Payment locks them in this
-- statement's one order, and New-Order locks no warehouse.
-- name: pay_warehouse_district
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip,
  d_name, d_street_1, d_street_2, d_city, d_state, d_zip
  FROM warehouse JOIN district ON d_w_id = w_id
 WHERE w_id = $1 AND d_id = $2 FOR UPDATE

-- The customer as the terminal shows it, before the payment.
-- name: pay_customer
SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
  c_since, c_credit, c_credit_lim, c_discount, c_balance, left(c_data, 200)
  FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 FOR UPDATE

-- $4 the amount; $5 what a bad-credit customer's c_data gets in front. ||
-- is OR here, so CONCAT joins them.
-- name: write:pay_customer
UPDATE customer SET
  c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, c_payment_cnt = c_payment_cnt + 1,
  c_data = CASE WHEN c_credit = 'BC' THEN left(concat($5, c_data), 500) ELSE c_data END
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3

-- Delivery (clause 2.7). A locking read waits for a concurrent Delivery
-- that holds the oldest new order, then skips the row that one deleted, so
-- a Delivery never loses the race that dl_pending is there for.
-- name: dl_new_order
SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 ORDER BY no_o_id LIMIT 1 FOR UPDATE

-- The row dl_new_order locked is still the oldest.
-- name: write:dl_new_order
DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 ORDER BY no_o_id LIMIT 1

-- name: dl_order
SELECT o_c_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 FOR UPDATE

-- name: write:dl_order
UPDATE orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3

-- name: dl_lines
SELECT ol_amount FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 FOR UPDATE

-- name: write:dl_lines
UPDATE order_line SET ol_delivery_d = $4 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3

-- Delivery's orders, lines and customers as sets, where the dialect has
-- them, once each district's oldest new order is taken: one statement for
-- every district's order, one for their lines and one for their customers,
-- and their writes, where the generic form has a statement a district for
-- each. The districts and their orders arrive as JSON arrays, $2 and $3,
-- of the same length; $1 is the warehouse, $4 the carrier, $5 the
-- delivery date. No other transaction locks an order or its lines once
-- it has left new_order, so the order these take their rows in is free.
-- name: dl_orders
SELECT o_d_id, o_c_id
  FROM JSON_TABLE($2, '$[*]' COLUMNS (n FOR ORDINALITY, d int PATH '$')) d
  JOIN JSON_TABLE($3, '$[*]' COLUMNS (n FOR ORDINALITY, o int PATH '$')) o ON o.n = d.n
  JOIN orders ON o_w_id = $1 AND o_d_id = d.d AND o_id = o.o
  FOR UPDATE

-- name: write:dl_orders
UPDATE orders
  JOIN JSON_TABLE($2, '$[*]' COLUMNS (n FOR ORDINALITY, d int PATH '$')) d ON o_d_id = d.d
  JOIN JSON_TABLE($3, '$[*]' COLUMNS (n FOR ORDINALITY, o int PATH '$')) o ON o.n = d.n AND o_id = o.o
 SET o_carrier_id = $4
 WHERE o_w_id = $1

-- name: dl_order_lines
SELECT ol_d_id, ol_amount
  FROM JSON_TABLE($2, '$[*]' COLUMNS (n FOR ORDINALITY, d int PATH '$')) d
  JOIN JSON_TABLE($3, '$[*]' COLUMNS (n FOR ORDINALITY, o int PATH '$')) o ON o.n = d.n
  JOIN order_line ON ol_w_id = $1 AND ol_d_id = d.d AND ol_o_id = o.o
  FOR UPDATE

-- name: write:dl_order_lines
UPDATE order_line
  JOIN JSON_TABLE($2, '$[*]' COLUMNS (n FOR ORDINALITY, d int PATH '$')) d ON ol_d_id = d.d
  JOIN JSON_TABLE($3, '$[*]' COLUMNS (n FOR ORDINALITY, o int PATH '$')) o ON o.n = d.n AND ol_o_id = o.o
 SET ol_delivery_d = $5
 WHERE ol_w_id = $1

-- $2 the districts, $3 their orders' customers, $4 the sums of their
-- lines in cents.
-- name: dl_customers
UPDATE customer
  JOIN JSON_TABLE($2, '$[*]' COLUMNS (n FOR ORDINALITY, d int PATH '$')) d ON c_d_id = d.d
  JOIN JSON_TABLE($3, '$[*]' COLUMNS (n FOR ORDINALITY, c int PATH '$')) c ON c.n = d.n AND c_id = c.c
  JOIN JSON_TABLE($4, '$[*]' COLUMNS (n FOR ORDINALITY, a int PATH '$')) a ON a.n = d.n
 SET c_balance = c_balance + a.a / 100, c_delivery_cnt = c_delivery_cnt + 1
 WHERE c_w_id = $1

-- Stock-Level (clause 2.8). Each distinct item counts once without a
-- DISTINCT: the optimizer makes the order lines' items a distinct set,
-- then looks each up by the stock's key.
-- name: sl_count
SELECT count(*) FROM stock
 WHERE s_w_id = $1 AND s_quantity < $4
   AND s_i_id IN (SELECT ol_i_id FROM order_line
                  WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3 - 20 AND ol_o_id < $3)

-- The server-side transactions of procs.sql: one call, one round trip. The
-- lists of New-Order's lines arrive as JSON arrays.
-- name: call:neword
CALL tprocc_neword($1, $2, $3, $4, $5, $6, $7)

-- name: call:payment
CALL tprocc_payment($1, $2, $3, $4, $5, $6, $7, $8, $9)

-- name: call:ostat
CALL tprocc_ostat($1, $2, $3, $4, $5)

-- name: call:delivery
CALL tprocc_delivery($1, $2, $3)

-- name: call:slev
CALL tprocc_slev($1, $2, $3)
