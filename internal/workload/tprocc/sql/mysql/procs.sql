-- The five transactions as stored procedures: each call is one round trip.
-- The build runs each proc:* block whole.
--
-- A CALL runs with autocommit on, so each procedure opens its transaction
-- and commits it itself: that also makes every transaction one COMMIT, or
-- one ROLLBACK, in the server's Com_commit and Com_rollback, which are the
-- database side's transaction count. What a procedure returns comes back
-- as its one result set, the last statement it runs.
--
-- Any error rolls the transaction back before it reaches the client: a
-- lock wait timeout undoes only the statement that waited, and the next
-- transaction on the session would otherwise commit what came before it.
-- New-Order asks for the intended rollback on the unused item the same
-- way, with SQLSTATE DR001: by convention the target classifies that as
-- the intended rollback, and the client counts it as such, not as an error.
--
-- Where a row is read and then updated, it is read with FOR UPDATE, which
-- locks it as the update will, as TPC-C's Appendix A does. SELECT ... INTO
-- that finds no row leaves the variables NULL, which is how the
-- procedures tell a missing row.

-- New-Order's lines arrive as three JSON arrays of the same length: the
-- items, their supplying warehouses and their quantities, in the order
-- the client sorted them, the unused item last.
-- name: proc:tprocc_neword
CREATE PROCEDURE tprocc_neword(
  p_w_id int, p_d_id int, p_c_id int,
  p_items text, p_supply_w text, p_qty text, p_entry_d datetime)
BEGIN
  DECLARE n int DEFAULT json_length(p_items);
  DECLARE i int DEFAULT 0;
  DECLARE v_o_id, v_item, v_supply, v_qty, v_quantity int;
  DECLARE v_all_local int DEFAULT 1;
  DECLARE v_d_tax, v_w_tax, v_discount decimal(4,4);
  DECLARE v_last varchar(16);
  DECLARE v_credit char(2);
  DECLARE v_price decimal(5,2);
  DECLARE v_name varchar(24);
  DECLARE v_idata, v_sdata varchar(50);
  DECLARE v_dist char(24);
  DECLARE v_amount decimal(6,2);
  DECLARE v_total decimal(12,2) DEFAULT 0;
  DECLARE v_msg varchar(128);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION;
  SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id FROM district
   WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  IF v_o_id IS NULL THEN
    SET v_msg = concat('no district ', p_d_id, ' of warehouse ', p_w_id);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;

  SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_w_tax
    FROM customer JOIN warehouse ON w_id = c_w_id
   WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;

  -- The lines go in as they come, and the order after them, once the loop
  -- knows whether every line was supplied locally.
  WHILE i < n DO
    SET v_item = json_value(p_items, concat('$[', i, ']')),
        v_supply = json_value(p_supply_w, concat('$[', i, ']')),
        v_qty = json_value(p_qty, concat('$[', i, ']')),
        v_price = NULL;
    SELECT i_price, i_name, i_data INTO v_price, v_name, v_idata FROM item WHERE i_id = v_item;
    IF v_price IS NULL THEN
      SET v_msg = concat('item ', v_item, ' not found');
      SIGNAL SQLSTATE 'DR001' SET MESSAGE_TEXT = v_msg;
    END IF;

    SET v_quantity = NULL;
    SELECT s_quantity,
      CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
        WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
        WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END,
      s_data
      INTO v_quantity, v_dist, v_sdata
      FROM stock WHERE s_w_id = v_supply AND s_i_id = v_item FOR UPDATE;
    IF v_quantity IS NULL THEN
      SET v_msg = concat('no stock for item ', v_item, ' in warehouse ', v_supply);
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
    END IF;
    UPDATE stock SET
      s_quantity = CASE WHEN v_quantity >= v_qty + 10 THEN v_quantity - v_qty ELSE v_quantity - v_qty + 91 END,
      s_ytd = s_ytd + v_qty,
      s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + (v_supply <> p_w_id)
     WHERE s_w_id = v_supply AND s_i_id = v_item;

    SET i = i + 1,
        v_amount = v_qty * v_price,
        v_total = v_total + v_amount;
    IF v_supply <> p_w_id THEN
      SET v_all_local = 0;
    END IF;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
    VALUES (v_o_id, p_d_id, p_w_id, i, v_item, v_supply, NULL, v_qty, v_amount, v_dist);
  END WHILE;

  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, n, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
  COMMIT;

  SELECT v_o_id, round(v_total * (1 - v_discount) * (1 + v_w_tax + v_d_tax), 2);
END

-- p_by_name picks the customer by p_c_last (the one at position ceil(n/2)
-- of the n with that name, in c_first order), else by p_c_id.
-- name: proc:tprocc_payment
CREATE PROCEDURE tprocc_payment(
  p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int,
  p_by_name boolean, p_c_last varchar(16), p_amount decimal(6,2), p_date datetime)
BEGIN
  DECLARE n, v_c_id int;
  DECLARE v_w_name, v_d_name varchar(10);
  DECLARE v_balance decimal(12,2);
  DECLARE v_credit char(2);
  DECLARE v_msg varchar(128);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION;
  SELECT w_name INTO v_w_name FROM warehouse WHERE w_id = p_w_id FOR UPDATE;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
  SELECT d_name INTO v_d_name FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;

  IF p_by_name THEN
    SELECT count(*) INTO n FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
    SET n = (n - 1) DIV 2;
    SELECT c_id INTO v_c_id FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
     ORDER BY c_first LIMIT n, 1;
  ELSE
    SET v_c_id = p_c_id;
  END IF;

  -- A bad-credit customer's c_data takes the payment in front; for the
  -- others it stays as it is, and the update leaves it out.
  SELECT c_balance, c_credit INTO v_balance, v_credit FROM customer
   WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
  IF v_balance IS NULL THEN
    SET v_msg = concat('no customer ', IF(p_by_name, p_c_last, p_c_id), ' in district ', p_c_d_id,
                       ' of warehouse ', p_c_w_id);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;
  SET v_balance = v_balance - p_amount;
  IF v_credit = 'BC' THEN
    UPDATE customer
       SET c_balance = v_balance, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1,
           c_data = left(concat_ws(' ', v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_amount, c_data), 500)
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  ELSE
    UPDATE customer
       SET c_balance = v_balance, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  END IF;

  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_date, p_amount,
          concat(v_w_name, '    ', v_d_name));
  COMMIT;

  SELECT v_c_id, v_balance;
END

-- The customer, the last order and its lines. The lines are read as the
-- terminal would show them, one text, so the answer stays one row: the
-- customer, the order (0 if none) and how many lines it has.
-- name: proc:tprocc_ostat
CREATE PROCEDURE tprocc_ostat(p_w_id int, p_d_id int, p_c_id int, p_by_name boolean, p_c_last varchar(16))
BEGIN
  DECLARE n, v_c_id, v_o_id, v_carrier_id int;
  DECLARE v_lines int DEFAULT 0;
  DECLARE v_first, v_last varchar(16);
  DECLARE v_middle char(2);
  DECLARE v_balance decimal(12,2);
  DECLARE v_entry_d datetime;
  DECLARE v_shown text;
  DECLARE v_msg varchar(128);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION READ ONLY;
  IF p_by_name THEN
    SELECT count(*) INTO n FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
    SET n = (n - 1) DIV 2;
    SELECT c_id, c_first, c_middle, c_last, c_balance INTO v_c_id, v_first, v_middle, v_last, v_balance
      FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
     ORDER BY c_first LIMIT n, 1;
  ELSE
    SELECT c_id, c_first, c_middle, c_last, c_balance INTO v_c_id, v_first, v_middle, v_last, v_balance
      FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  END IF;
  IF v_c_id IS NULL THEN
    SET v_msg = concat('no customer ', IF(p_by_name, p_c_last, p_c_id), ' in district ', p_d_id,
                       ' of warehouse ', p_w_id);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
  END IF;

  SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry_d, v_carrier_id
    FROM orders
   WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
   ORDER BY o_id DESC LIMIT 1;
  IF v_o_id IS NOT NULL THEN
    SELECT count(*),
           group_concat(concat_ws(' ', ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d)
                        ORDER BY ol_number SEPARATOR '; ')
      INTO v_lines, v_shown
      FROM order_line
     WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
  END IF;
  COMMIT;

  SELECT v_c_id, coalesce(v_o_id, 0), v_lines;
END

-- Delivers the oldest new order of each district, skipping districts that
-- have none, and returns how many it delivered. The locking read of the
-- oldest new order waits for a concurrent Delivery that holds it, then
-- skips the row that one deleted, so two Deliveries never take one order.
-- name: proc:tprocc_delivery
CREATE PROCEDURE tprocc_delivery(p_w_id int, p_carrier_id int, p_delivery_d datetime)
BEGIN
  DECLARE d int DEFAULT 1;
  DECLARE delivered int DEFAULT 0;
  DECLARE v_o_id, v_c_id int;
  DECLARE v_amount decimal(12,2);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION;
  WHILE d <= 10 DO
    SET v_o_id = NULL;
    SELECT no_o_id INTO v_o_id FROM new_order
     WHERE no_w_id = p_w_id AND no_d_id = d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_o_id IS NOT NULL THEN
      DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d AND no_o_id = v_o_id;
      SELECT o_c_id INTO v_c_id FROM orders
       WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id FOR UPDATE;
      UPDATE orders SET o_carrier_id = p_carrier_id
       WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id;
      SELECT coalesce(sum(ol_amount), 0) INTO v_amount FROM order_line
       WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id FOR UPDATE;
      UPDATE order_line SET ol_delivery_d = p_delivery_d
       WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id;
      UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
       WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id;
      SET delivered = delivered + 1;
    END IF;
    SET d = d + 1;
  END WHILE;
  COMMIT;

  SELECT delivered;
END

-- Counts the distinct items of the district's last 20 orders whose stock in
-- the warehouse is below p_threshold, as tx.sql's sl_count does.
-- name: proc:tprocc_slev
CREATE PROCEDURE tprocc_slev(p_w_id int, p_d_id int, p_threshold int)
BEGIN
  DECLARE v_next int;
  DECLARE low int DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION READ ONLY;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT count(*) INTO low FROM stock
   WHERE s_w_id = p_w_id AND s_quantity < p_threshold
     AND s_i_id IN (SELECT ol_i_id FROM order_line
                    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id >= v_next - 20 AND ol_o_id < v_next);
  COMMIT;

  SELECT low;
END
