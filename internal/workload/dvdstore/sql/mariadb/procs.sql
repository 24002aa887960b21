-- The order's steps and the report as stored procedures: one CALL each,
-- whose last SELECT is its one result set. The build runs each proc:*
-- block whole.
--
-- A CALL runs with autocommit on, so the purchase opens its transaction
-- and commits it itself, and any error rolls it back before it reaches
-- the client: a lock wait timeout undoes only the statement that waited,
-- and the session's next transaction would otherwise commit what came
-- before it. A product out of stock asks for the intended rollback the
-- same way, with SQLSTATE DR001, which the target classifies as such.
-- SELECT ... INTO that finds no row leaves its variables as they were
-- (NULL), which is how a procedure tells a missing row.

-- The customer's id on each of their last purchases, with the title
-- customers who bought it also bought; one row of NULLs beside the id
-- where they have none, and no result where the login fails.
-- name: proc:login
CREATE PROCEDURE ds_login(p_username varchar(50), p_password varchar(50))
BEGIN
  DECLARE v_id int;
  SELECT customerid INTO v_id FROM ds_customers WHERE username = p_username AND password = p_password;
  IF v_id IS NOT NULL THEN
    SELECT v_id, h.title, h.actor, h.related
      FROM (SELECT 1) one
      LEFT JOIN (SELECT p.title, p.actor, rp.title AS related FROM ds_cust_hist ch
                 JOIN ds_products p ON p.prod_id = ch.prod_id JOIN ds_products rp ON rp.prod_id = p.common_prod_id
                 WHERE ch.customerid = v_id ORDER BY ch.orderid DESC LIMIT 10) h ON 1 = 1;
  END IF;
END

-- The new customer's id, or 0 where the name is taken.
-- name: proc:new_customer
CREATE PROCEDURE ds_new_customer(p_first varchar(50), p_last varchar(50), p_address varchar(50), p_city varchar(50),
  p_state varchar(50), p_zip varchar(9), p_country varchar(50), p_region smallint, p_email varchar(50),
  p_phone varchar(50), p_cctype int, p_cc varchar(50), p_ccexp varchar(50), p_username varchar(50), p_age smallint,
  p_income int, p_gender varchar(1))
BEGIN
  INSERT IGNORE INTO ds_customers (firstname, lastname, address1, address2, city, state, zip, country, region, email,
    phone, creditcardtype, creditcard, creditcardexpiration, username, password, age, income, gender)
  VALUES (p_first, p_last, p_address, '', p_city, p_state, p_zip, p_country, p_region, p_email, p_phone, p_cctype,
    p_cc, p_ccexp, p_username, 'password', p_age, p_income, p_gender);
  SELECT IF(row_count() = 1, last_insert_id(), 0);
END

-- name: proc:browse_category
CREATE PROCEDURE ds_browse_category(p_batch int, p_category int)
BEGIN
  SELECT prod_id, title, actor, price FROM ds_products WHERE category = p_category AND special = 1 LIMIT p_batch;
END

-- The searches ask for every word of the name or title (see order.sql).
-- name: proc:browse_actor
CREATE PROCEDURE ds_browse_actor(p_batch int, p_actor varchar(50))
BEGIN
  DECLARE v_words varchar(120) DEFAULT concat('+', replace(p_actor, ' ', ' +'));
  SELECT prod_id, title, actor, price FROM ds_products
   WHERE MATCH (actor) AGAINST (v_words IN BOOLEAN MODE) LIMIT p_batch;
END

-- name: proc:browse_title
CREATE PROCEDURE ds_browse_title(p_batch int, p_title varchar(50))
BEGIN
  DECLARE v_words varchar(120) DEFAULT concat('+', replace(p_title, ' ', ' +'));
  SELECT prod_id, title, actor, price FROM ds_products
   WHERE MATCH (title) AGAINST (v_words IN BOOLEAN MODE) LIMIT p_batch;
END

-- The purchase: the order, then per line the stock (restocking below 3 in
-- the same update), the line and the history. The lines arrive as two
-- JSON arrays of the same length, the products in the client's order
-- (sorted, so that two purchases lock shared rows in the same order) and
-- their quantities.
-- name: proc:purchase
CREATE PROCEDURE ds_purchase(p_customer int, p_net decimal(12,2), p_tax decimal(12,2), p_total decimal(12,2),
  p_prods text, p_qtys text)
BEGIN
  DECLARE n int DEFAULT json_length(p_prods);
  DECLARE i int DEFAULT 0;
  DECLARE v_order, v_prod, v_qty, v_left, v_back int;
  DECLARE v_today date DEFAULT current_date;
  DECLARE v_msg varchar(128);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION;
  INSERT INTO ds_orders (orderdate, customerid, netamount, tax, totalamount)
  VALUES (v_today, p_customer, p_net, p_tax, p_total);
  SET v_order = last_insert_id();
  WHILE i < n DO
    SET v_prod = json_value(p_prods, concat('$[', i, ']')),
        v_qty = json_value(p_qtys, concat('$[', i, ']')),
        v_left = NULL, v_back = 0, i = i + 1;
    SELECT quan_in_stock - v_qty INTO v_left FROM ds_inventory
     WHERE prod_id = v_prod AND quan_in_stock >= v_qty FOR UPDATE;
    IF v_left IS NULL THEN
      SET v_msg = concat('product ', v_prod, ' is out of stock');
      SIGNAL SQLSTATE 'DR001' SET MESSAGE_TEXT = v_msg;
    END IF;
    IF v_left < 3 THEN
      SET v_back = IF(v_prod % 10000 = 0, 2500, 250);
      INSERT INTO ds_reorder (prod_id, date_low, quan_low, date_reordered, quan_reordered, date_expected)
      VALUES (v_prod, v_today, v_left, v_today, v_back, v_today);
    END IF;
    UPDATE ds_inventory SET quan_in_stock = v_left + v_back, sales = sales + v_qty WHERE prod_id = v_prod;
    INSERT INTO ds_orderlines (orderlineid, orderid, prod_id, quantity, orderdate) VALUES (i, v_order, v_prod, v_qty, v_today);
    INSERT INTO ds_cust_hist (customerid, orderid, prod_id) VALUES (p_customer, v_order, v_prod);
  END WHILE;
  COMMIT;
  SELECT v_order;
END

-- The report: one category's sales in the month, quarter and half-year
-- up to the anchor, in one pass over the half-year's lines.
-- name: proc:category_sales
CREATE PROCEDURE ds_category_sales(p_category int, p_month date, p_quarter date, p_half date, p_anchor date)
BEGIN
  SELECT coalesce(sum(CASE WHEN ol.orderdate >= p_month THEN ol.quantity * p.price END), 0),
         coalesce(sum(CASE WHEN ol.orderdate >= p_quarter THEN ol.quantity * p.price END), 0),
         coalesce(sum(ol.quantity * p.price), 0)
    FROM ds_orderlines ol JOIN ds_products p ON p.prod_id = ol.prod_id
   WHERE p.category = p_category AND ol.orderdate >= p_half AND ol.orderdate <= p_anchor;
END
