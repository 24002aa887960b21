-- The order's steps as PL/pgSQL functions: one call each.

-- name: proc:login
CREATE FUNCTION ds_login(uname text, pw text) RETURNS TABLE (customerid int, title text, actor text, related text)
LANGUAGE plpgsql AS $$
DECLARE
  id int;
BEGIN
  SELECT c.customerid INTO id FROM ds_customers c WHERE c.username = uname AND c.password = pw;
  IF id IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY
    SELECT id, p.title::text, p.actor::text, rp.title::text FROM ds_cust_hist h
    JOIN ds_products p ON p.prod_id = h.prod_id JOIN ds_products rp ON rp.prod_id = p.common_prod_id
    WHERE h.customerid = id ORDER BY h.orderid DESC LIMIT 10;
  IF NOT FOUND THEN
    RETURN QUERY SELECT id, NULL::text, NULL::text, NULL::text;
  END IF;
END $$;

-- 0 where the name is taken.
-- name: proc:new_customer
CREATE FUNCTION ds_new_customer(first text, last text, addr text, city text, state text, zip text, country text,
  region int, email text, phone text, cctype int, cc text, ccexp text, uname text, age int, income int, gender text)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  id int;
BEGIN
  INSERT INTO ds_customers (firstname, lastname, address1, address2, city, state, zip, country, region, email, phone,
    creditcardtype, creditcard, creditcardexpiration, username, password, age, income, gender)
  VALUES (first, last, addr, '', city, state, zip, country, region, email, phone, cctype, cc, ccexp, uname,
    'password', age, income, gender)
  ON CONFLICT (username) DO NOTHING RETURNING customerid INTO id;
  RETURN coalesce(id, 0);
END $$;

-- name: proc:browse_category
CREATE FUNCTION ds_browse_category(batch int, cat int) RETURNS TABLE (prod_id int, title text, actor text, price numeric)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT p.prod_id, p.title::text, p.actor::text, p.price FROM ds_products p
    WHERE p.category = cat AND p.special = 1 LIMIT batch;
END $$;

-- name: proc:browse_actor
CREATE FUNCTION ds_browse_actor(batch int, name text) RETURNS TABLE (prod_id int, title text, actor text, price numeric)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT p.prod_id, p.title::text, p.actor::text, p.price FROM ds_products p
    WHERE to_tsvector('simple', p.actor) @@ plainto_tsquery('simple', name) LIMIT batch;
END $$;

-- name: proc:browse_title
CREATE FUNCTION ds_browse_title(batch int, words text) RETURNS TABLE (prod_id int, title text, actor text, price numeric)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT p.prod_id, p.title::text, p.actor::text, p.price FROM ds_products p
    WHERE to_tsvector('simple', p.title) @@ plainto_tsquery('simple', words) LIMIT batch;
END $$;

-- The purchase: the order, then per line the stock (restocking below 3),
-- the line and the history. A product out of stock raises SQLSTATE
-- 'DR001', dbrig's intended rollback, which undoes the whole call.
-- name: proc:purchase
CREATE FUNCTION ds_purchase(cust int, net numeric, tax numeric, total numeric, prods int[], qtys int[])
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  oid int;
  left_ int;
  back int;
  today date := current_date;
BEGIN
  INSERT INTO ds_orders (orderdate, customerid, netamount, tax, totalamount)
  VALUES (today, cust, net, tax, total) RETURNING orderid INTO oid;
  FOR i IN 1 .. array_length(prods, 1) LOOP
    UPDATE ds_inventory SET quan_in_stock = quan_in_stock - qtys[i], sales = sales + qtys[i]
    WHERE prod_id = prods[i] AND quan_in_stock >= qtys[i] RETURNING quan_in_stock INTO left_;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'product % is out of stock', prods[i] USING ERRCODE = 'DR001';
    END IF;
    IF left_ < 3 THEN
      back := CASE WHEN prods[i] % 10000 = 0 THEN 2500 ELSE 250 END;
      INSERT INTO ds_reorder (prod_id, date_low, quan_low, date_reordered, quan_reordered, date_expected)
      VALUES (prods[i], today, left_, today, back, today);
      UPDATE ds_inventory SET quan_in_stock = quan_in_stock + back WHERE prod_id = prods[i];
    END IF;
    INSERT INTO ds_orderlines (orderlineid, orderid, prod_id, quantity, orderdate) VALUES (i, oid, prods[i], qtys[i], today);
    INSERT INTO ds_cust_hist (customerid, orderid, prod_id) VALUES (cust, oid, prods[i]);
  END LOOP;
  RETURN oid;
END $$;

-- The report: one category's sales in the month, quarter and half-year
-- up to the anchor, in one pass over the half-year's lines.
-- name: proc:category_sales
CREATE FUNCTION ds_category_sales(cat int, month_start date, quarter_start date, half_start date, anchor date)
RETURNS TABLE (month numeric, quarter numeric, half numeric) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
    SELECT coalesce(sum(ol.quantity * p.price) FILTER (WHERE ol.orderdate >= month_start), 0),
           coalesce(sum(ol.quantity * p.price) FILTER (WHERE ol.orderdate >= quarter_start), 0),
           coalesce(sum(ol.quantity * p.price), 0)
    FROM ds_orderlines ol JOIN ds_products p ON p.prod_id = ol.prod_id
    WHERE p.category = cat AND ol.orderdate >= half_start AND ol.orderdate <= anchor;
END $$;
