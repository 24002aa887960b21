-- The durability audit (TPC-C clause 3.5): what became of the New-Orders
-- the database acknowledged before a crash.

-- One district's orders with ids $3..$4, each with its customer, its line
-- count, whether it is whole (as many order lines as its header says, and
-- either its new_order row or, once delivered, a carrier), and its first
-- line's item.
-- name: orders
SELECT o_id, o_c_id, o_ol_cnt,
  CASE WHEN (o_carrier_id IS NOT NULL
             OR EXISTS (SELECT 1 FROM new_order WHERE no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id))
        AND o_ol_cnt = (SELECT count(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id)
       THEN 1 ELSE 0 END,
  (SELECT ol_i_id FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_number = 1)
FROM orders
WHERE o_w_id = $1 AND o_d_id = $2 AND o_id BETWEEN $3 AND $4
