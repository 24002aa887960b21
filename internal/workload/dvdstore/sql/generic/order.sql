-- The steps of one order, client-side statements.

-- name: login
SELECT customerid FROM ds_customers WHERE username = $1 AND password = $2

-- The customer's last purchases, each with the title customers who bought
-- it also bought.
-- name: history
SELECT p.title, p.actor, rp.title FROM ds_cust_hist h
JOIN ds_products p ON p.prod_id = h.prod_id JOIN ds_products rp ON rp.prod_id = p.common_prod_id
WHERE h.customerid = $1 ORDER BY h.orderid DESC LIMIT 10

-- A name already taken returns no row, and the driver draws another.
-- name: new_customer
INSERT INTO ds_customers (firstname, lastname, address1, address2, city, state, zip, country, region, email, phone,
  creditcardtype, creditcard, creditcardexpiration, username, password, age, income, gender)
VALUES ($1, $2, $3, '', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'password', $15, $16, $17)
ON CONFLICT (username) DO NOTHING RETURNING customerid

-- name: browse_category
SELECT prod_id, title, actor, price FROM ds_products WHERE category = $1 AND special = 1 LIMIT $2

-- Whole names and titles: an index finds them (see schema.sql).
-- name: browse_actor
SELECT prod_id, title, actor, price FROM ds_products WHERE actor = $1 LIMIT $2

-- name: browse_title
SELECT prod_id, title, actor, price FROM ds_products WHERE title = $1 LIMIT $2

-- name: price
SELECT price FROM ds_products WHERE prod_id = $1

-- name: begin_write
BEGIN

-- name: commit
COMMIT

-- name: rollback
ROLLBACK

-- name: new_order
INSERT INTO ds_orders (orderdate, customerid, netamount, tax, totalamount) VALUES ($1, $2, $3, $4, $5) RETURNING orderid

-- Takes the stock only if there is enough; no row back means out of
-- stock, and the order rolls back.
-- name: take_stock
UPDATE ds_inventory SET quan_in_stock = quan_in_stock - $2, sales = sales + $2
WHERE prod_id = $1 AND quan_in_stock >= $2 RETURNING quan_in_stock

-- Stock below 3 is reordered and restocked at once, as the original's
-- trigger does, so that the share of orders that find a product out of
-- stock stays where it started.
-- name: reorder
INSERT INTO ds_reorder (prod_id, date_low, quan_low, date_reordered, quan_reordered, date_expected) VALUES ($1, $2, $3, $2, $4, $2)

-- name: restock
UPDATE ds_inventory SET quan_in_stock = quan_in_stock + $2 WHERE prod_id = $1

-- name: order_line
INSERT INTO ds_orderlines (orderlineid, orderid, prod_id, quantity, orderdate) VALUES ($1, $2, $3, $4, $5)

-- name: cust_hist
INSERT INTO ds_cust_hist (customerid, orderid, prod_id) VALUES ($1, $2, $3)

-- The orders the database holds, which only committed purchases add to.
-- name: mark
SELECT count(*) FROM ds_orders
