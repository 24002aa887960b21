-- The five transactions as PL/pgSQL functions: each runs as one statement,
-- so one round trip and the statement's implicit transaction. The build runs
-- each proc:* block whole. No EXCEPTION blocks: each would open a
-- subtransaction on every call.
--
-- New-Order rolls back on the unused item by raising SQLSTATE DR001, which
-- aborts the calling statement and with it everything the function did. That
-- is the PostgreSQL target's convention for an intended rollback: it
-- classifies DR001 as one, and the client counts it as such, not as an error.

-- name: proc:tprocc_neword
-- The order lines are one statement: the items joined in the client's line
-- order (l), their stock updated (s) and the lines inserted from what the
-- update returns. Twenty statements of a loop cost the server more than
-- the work they do. The stock rows lock in l's order, the client's sorted
-- (item, supply warehouse) order, because l, ordered by the ordinal, drives
-- a nested loop over stock's key: TestNewOrderProcPostgres holds it to
-- that under a generic plan, since a hash join would lock in hash order.
-- An unused item drops out of l; the found items' stock and lines are
-- written all the same before DR001 is raised, so the rollback undoes the
-- work a New-Order does.
CREATE OR REPLACE FUNCTION tprocc_neword(
  p_w_id int, p_d_id int, p_c_id int,
  p_items int[], p_supply_w int[], p_qty int[], p_entry_d timestamp,
  OUT order_id int, OUT total_amount numeric)
LANGUAGE plpgsql AS $$
DECLARE
  n int := cardinality(p_items);
  v_d_tax numeric;
  v_w_tax numeric;
  v_discount numeric;
  v_last varchar;
  v_credit char(2);
  v_items int;
  v_lines int[];
  v_done int[] := '{}';
  v_sum numeric;
BEGIN
  UPDATE district SET d_next_o_id = d_next_o_id + 1
   WHERE d_w_id = p_w_id AND d_id = p_d_id
  RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, order_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no district % of warehouse %', p_d_id, p_w_id;
  END IF;

  SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_w_tax
    FROM customer JOIN warehouse ON w_id = c_w_id
   WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;

  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (order_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, n,
          CASE WHEN p_w_id = ALL (p_supply_w) THEN 1 ELSE 0 END);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (order_id, p_d_id, p_w_id);

  -- A line that repeats an earlier one's item and warehouse drops out of
  -- the statement's lines (an UPDATE changes a row once), so the statement
  -- runs again for the lines it left, on rows this transaction holds.
  total_amount := 0;
  LOOP
    WITH l AS (
      SELECT u.item, u.supply, u.qty, u.nr, i.i_price
        FROM unnest(p_items, p_supply_w, p_qty) WITH ORDINALITY AS u(item, supply, qty, nr)
        JOIN item i ON i.i_id = u.item
       WHERE u.nr <> ALL (v_done)
       ORDER BY u.nr),
    s AS (
      UPDATE stock SET
        s_quantity = CASE WHEN s_quantity >= l.qty + 10 THEN s_quantity - l.qty
                          ELSE s_quantity - l.qty + 91 END,
        s_ytd = s_ytd + l.qty,
        s_order_cnt = s_order_cnt + 1,
        s_remote_cnt = s_remote_cnt + CASE WHEN l.supply = p_w_id THEN 0 ELSE 1 END
        FROM l
       WHERE s_w_id = l.supply AND s_i_id = l.item
      RETURNING l.nr, l.item, l.supply, l.qty, l.qty * l.i_price AS amount,
        CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
          WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
          WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist),
    ins AS (
      INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                              ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      SELECT order_id, p_d_id, p_w_id, s.nr, s.item, s.supply, NULL, s.qty, s.amount, s.dist FROM s
      RETURNING ol_number, ol_amount)
    SELECT (SELECT count(*) FROM l), array_agg(ol_number), coalesce(sum(ol_amount), 0)
      INTO v_items, v_lines, v_sum
      FROM ins;
    IF v_items < n - cardinality(v_done) THEN
      -- The intended rollback is no error worth three lines of the
      -- server's log: where this role may, keep it out, for this
      -- transaction alone.
      IF tprocc_quiet() THEN
        PERFORM set_config('log_min_messages', 'fatal', true),
                set_config('log_min_error_statement', 'panic', true);
      END IF;
      RAISE EXCEPTION 'item not found' USING ERRCODE = 'DR001';
    END IF;
    total_amount := total_amount + v_sum;
    v_done := v_done || v_lines;
    EXIT WHEN cardinality(v_done) = n;
    IF v_lines IS NULL THEN
      RAISE EXCEPTION 'no stock for some of items % in warehouses %', p_items, p_supply_w;
    END IF;
  END LOOP;

  total_amount := round(total_amount * (1 - v_discount) * (1 + v_w_tax + v_d_tax), 2);
END
$$;

-- Whether this role may keep New-Order's intended rollbacks out of the
-- server log: log_min_messages and log_min_error_statement are superuser
-- settings, which PostgreSQL 15 lets a role be granted (GRANT SET ON
-- PARAMETER). New-Order asks only as it rolls back, so the orders that
-- commit pay nothing, and the role asked is the one running, whoever
-- built; dbrig check says when the answer is no.
-- name: proc:tprocc_quiet
CREATE OR REPLACE FUNCTION tprocc_quiet() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF current_setting('is_superuser')::boolean THEN
    RETURN true;
  END IF;
  -- has_parameter_privilege is 15's; PL/pgSQL parses a statement only
  -- when it first runs it.
  IF current_setting('server_version_num')::int < 150000 THEN
    RETURN false;
  END IF;
  RETURN has_parameter_privilege('log_min_messages', 'SET')
     AND has_parameter_privilege('log_min_error_statement', 'SET');
END
$$;

-- p_by_name picks the customer by p_c_last (the middle one of those with
-- that name, in c_first order), else by p_c_id.
-- name: proc:tprocc_payment
CREATE OR REPLACE FUNCTION tprocc_payment(
  p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int,
  p_by_name boolean, p_c_last varchar, p_amount numeric, p_date timestamp,
  OUT cust_id int, OUT cust_balance numeric)
LANGUAGE plpgsql AS $$
DECLARE
  -- The column's scale, so c_data records the amount as h_amount holds it.
  v_amount numeric(6,2) := p_amount;
  v_w_name varchar;
  v_d_name varchar;
BEGIN
  UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w_id
  RETURNING w_name INTO v_w_name;
  UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
  RETURNING d_name INTO v_d_name;

  IF p_by_name THEN
    SELECT (array_agg(c_id ORDER BY c_first))[(count(*)::int + 1) / 2] INTO cust_id
      FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
  ELSE
    cust_id := p_c_id;
  END IF;

  UPDATE customer SET
    c_balance = c_balance - v_amount,
    c_ytd_payment = c_ytd_payment + v_amount,
    c_payment_cnt = c_payment_cnt + 1,
    c_data = CASE WHEN c_credit = 'BC'
                  THEN substr(format('%s %s %s %s %s %s ', c_id, c_d_id, c_w_id, p_d_id, p_w_id, v_amount)
                              || c_data, 1, 500)
                  ELSE c_data END
   WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = cust_id
  RETURNING c_balance INTO cust_balance;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no customer % in district % of warehouse %',
      CASE WHEN p_by_name THEN p_c_last ELSE p_c_id::text END, p_c_d_id, p_c_w_id;
  END IF;

  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (cust_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_date, v_amount,
          v_w_name || '    ' || v_d_name);
END
$$;

-- The customer, the last order and its lines; the lines come back as arrays
-- so the whole answer is one row.
-- name: proc:tprocc_ostat
CREATE OR REPLACE FUNCTION tprocc_ostat(
  p_w_id int, p_d_id int, p_c_id int, p_by_name boolean, p_c_last varchar,
  OUT cust_id int, OUT cust_first varchar, OUT cust_middle char(2), OUT cust_last varchar,
  OUT cust_balance numeric, OUT order_id int, OUT entry_d timestamp, OUT carrier_id int,
  OUT line_items int[], OUT line_supply_w int[], OUT line_qty int[],
  OUT line_amounts numeric[], OUT line_delivery_d timestamp[])
LANGUAGE plpgsql AS $$
BEGIN
  IF p_by_name THEN
    SELECT c_id, c_first, c_middle, c_last, c_balance
      INTO cust_id, cust_first, cust_middle, cust_last, cust_balance
      FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
     ORDER BY c_first
    OFFSET (SELECT (count(*) - 1) / 2 FROM customer
             WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last)
     LIMIT 1;
  ELSE
    SELECT c_id, c_first, c_middle, c_last, c_balance
      INTO cust_id, cust_first, cust_middle, cust_last, cust_balance
      FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  END IF;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no customer % in district % of warehouse %',
      CASE WHEN p_by_name THEN p_c_last ELSE p_c_id::text END, p_d_id, p_w_id;
  END IF;

  SELECT o_id, o_entry_d, o_carrier_id INTO order_id, entry_d, carrier_id
    FROM orders
   WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = cust_id
   ORDER BY o_id DESC
   LIMIT 1;
  IF NOT FOUND THEN
    RETURN;
  END IF;

  SELECT array_agg(ol_i_id ORDER BY ol_number), array_agg(ol_supply_w_id ORDER BY ol_number),
         array_agg(ol_quantity ORDER BY ol_number), array_agg(ol_amount ORDER BY ol_number),
         array_agg(ol_delivery_d ORDER BY ol_number)
    INTO line_items, line_supply_w, line_qty, line_amounts, line_delivery_d
    FROM order_line
   WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = order_id;
END
$$;

-- Delivers the oldest new order of each district, skipping districts that
-- have none, and returns how many it delivered.
-- name: proc:tprocc_delivery
CREATE OR REPLACE FUNCTION tprocc_delivery(p_w_id int, p_carrier_id int, p_delivery_d timestamp)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  v_o_id int;
  v_c_id int;
  v_amount numeric;
  delivered int := 0;
BEGIN
  FOR d IN 1 .. 10 LOOP
    LOOP
      DELETE FROM new_order
       WHERE no_w_id = p_w_id AND no_d_id = d
         AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d)
      RETURNING no_o_id INTO v_o_id;
      EXIT WHEN FOUND;
      -- A concurrent Delivery took that order first: its delete made ours
      -- match nothing. Each statement here sees a fresh snapshot, so look
      -- again unless the district has nothing left to deliver.
      PERFORM 1 FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d LIMIT 1;
      EXIT WHEN NOT FOUND;
    END LOOP;
    CONTINUE WHEN v_o_id IS NULL;

    UPDATE orders SET o_carrier_id = p_carrier_id
     WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id
    RETURNING o_c_id INTO v_c_id;

    WITH l AS (
      UPDATE order_line SET ol_delivery_d = p_delivery_d
       WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id
      RETURNING ol_amount)
    SELECT coalesce(sum(ol_amount), 0) INTO v_amount FROM l;

    UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
     WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id;

    delivered := delivered + 1;
    v_o_id := NULL;
  END LOOP;
  RETURN delivered;
END
$$;

-- Counts the distinct items of the district's last 20 orders whose stock in
-- the warehouse is below p_threshold. The stock is read one probe of its
-- key per distinct item, a correlated subquery, whatever the planner makes
-- of the range of orders: joined instead, under the generic plan PL/pgSQL
-- settles on, the range's estimate (thousands of lines) can turn the join
-- into a hash join over the warehouse's whole stock, 30 times slower.
-- TestStockLevelPlanPostgres holds it to the probes.
-- name: proc:tprocc_slev
CREATE OR REPLACE FUNCTION tprocc_slev(p_w_id int, p_d_id int, p_threshold int)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  v_next int;
  low int;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT count(*) INTO low
    FROM (SELECT DISTINCT ol_i_id FROM order_line
           WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id
             AND ol_o_id >= v_next - 20 AND ol_o_id < v_next) l
   WHERE (SELECT s_quantity FROM stock WHERE s_w_id = p_w_id AND s_i_id = l.ol_i_id) < p_threshold;
  RETURN low;
END
$$;
