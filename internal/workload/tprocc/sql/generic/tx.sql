-- The five transactions, client-side: each block is one prepared statement
-- in the SQL PostgreSQL and SQLite share. Parameters are $1..$N, in any order
-- and as often as needed; each target rewrites them for its driver. A
-- dialect's tx.sql replaces the blocks it writes differently and adds the
-- call:* blocks where the database runs the transactions as routines. A
-- dialect without UPDATE ... RETURNING makes such a block a locking read
-- and adds the update as write:<the block's name>, which takes the same
-- arguments.

-- name: begin_write
BEGIN

-- name: begin_read
BEGIN

-- name: commit
COMMIT

-- name: rollback
ROLLBACK

-- New-Order (clause 2.4). Taking the order number is the district row's
-- update, so concurrent orders queue on it rather than read a stale value.
-- name: no_district
UPDATE district SET d_next_o_id = d_next_o_id + 1
 WHERE d_w_id = $1 AND d_id = $2
RETURNING d_tax, d_next_o_id - 1

-- name: no_customer
SELECT c_discount, c_last, c_credit, w_tax
  FROM customer JOIN warehouse ON w_id = c_w_id
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3

-- name: no_order
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)

-- name: no_new_order
INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)

-- name: no_item
SELECT i_price, i_name, i_data FROM item WHERE i_id = $1

-- $3 quantity, $4 1 if the supplying warehouse is remote, $5 the district
-- whose s_dist_XX goes into the order line. $5 gets its type from CAST,
-- which every dialect reads, rather than PostgreSQL's ::.
-- name: no_stock
UPDATE stock SET
  s_quantity = CASE WHEN s_quantity >= $3 + 10 THEN s_quantity - $3 ELSE s_quantity - $3 + 91 END,
  s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $4
 WHERE s_w_id = $1 AND s_i_id = $2
RETURNING s_quantity,
  CASE CAST($5 AS integer) WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
    WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
    WHEN 9 THEN s_dist_09 ELSE s_dist_10 END,
  s_data

-- name: no_line
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
  ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)

-- Payment (clause 2.5).
-- name: pay_warehouse
UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1
RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip

-- name: pay_district
UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2
RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip

-- name: pay_customer_by_name
SELECT c_id FROM customer
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
 ORDER BY c_first

-- $4 the amount; $5 what a bad-credit customer's c_data gets in front.
-- name: pay_customer
UPDATE customer SET
  c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, c_payment_cnt = c_payment_cnt + 1,
  c_data = CASE WHEN c_credit = 'BC' THEN substr($5 || c_data, 1, 500) ELSE c_data END
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
  c_since, c_credit, c_credit_lim, c_discount, c_balance, substr(c_data, 1, 200)

-- name: pay_history
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)

-- Order-Status (clause 2.6).
-- name: os_customer_by_name
SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
 ORDER BY c_first

-- name: os_customer
SELECT c_balance, c_first, c_middle, c_last FROM customer
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3

-- name: os_order
SELECT o_id, o_entry_d, COALESCE(o_carrier_id, 0) FROM orders
 WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3
 ORDER BY o_id DESC LIMIT 1

-- name: os_lines
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3

-- Delivery (clause 2.7). Taking the oldest new order is one statement. A
-- concurrent Delivery that took the same row first leaves it returning
-- nothing; dl_pending then tells a lost race from an empty district (a
-- race SQLite's single writer never loses).
-- name: dl_new_order
DELETE FROM new_order
 WHERE no_w_id = $1 AND no_d_id = $2
   AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = $1 AND no_d_id = $2)
RETURNING no_o_id

-- name: dl_pending
SELECT 1 FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 LIMIT 1

-- name: dl_order
UPDATE orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3
RETURNING o_c_id

-- name: dl_lines
UPDATE order_line SET ol_delivery_d = $4 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3
RETURNING ol_amount

-- name: dl_customer
UPDATE customer SET c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3

-- Stock-Level (clause 2.8).
-- name: sl_district
SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2

-- $3 d_next_o_id, $4 the threshold.
-- name: sl_count
SELECT count(DISTINCT s_i_id)
  FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id
 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3 - 20 AND ol_o_id < $3
   AND s_quantity < $4
