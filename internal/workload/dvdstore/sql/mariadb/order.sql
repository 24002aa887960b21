-- MariaDB's differences from generic/order.sql.

-- A name already taken is ignored, and an ignored row returns nothing.
-- name: new_customer
INSERT IGNORE INTO ds_customers (firstname, lastname, address1, address2, city, state, zip, country, region, email, phone,
  creditcardtype, creditcard, creditcardexpiration, username, password, age, income, gender)
VALUES ($1, $2, $3, '', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'password', $15, $16, $17)
RETURNING customerid

-- The searches by actor and title are full-text searches of every word
-- the search names, as PostgreSQL's plainto_tsquery makes them; the
-- FULLTEXT indexes (see schema.sql) serve them.
-- name: browse_actor
SELECT prod_id, title, actor, price FROM ds_products
WHERE MATCH (actor) AGAINST (concat('+', replace($1, ' ', ' +')) IN BOOLEAN MODE) LIMIT $2

-- name: browse_title
SELECT prod_id, title, actor, price FROM ds_products
WHERE MATCH (title) AGAINST (concat('+', replace($1, ' ', ' +')) IN BOOLEAN MODE) LIMIT $2

-- name: begin_write
START TRANSACTION

-- There is no UPDATE ... RETURNING: the stock is read and locked (SELECT
-- ... FOR UPDATE) as the update will lock it, and write:take_stock, run
-- next with the same arguments, takes it. No row back still means out of
-- stock; the row is the stock left once the write has run.
-- name: take_stock
SELECT quan_in_stock - $2 FROM ds_inventory WHERE prod_id = $1 AND quan_in_stock >= $2 FOR UPDATE

-- name: write:take_stock
UPDATE ds_inventory SET quan_in_stock = quan_in_stock - $2, sales = sales + $2 WHERE prod_id = $1

-- The steps as stored procedures (procs.sql), one CALL each.
-- name: call:login
CALL ds_login($1, $2)

-- name: call:new_customer
CALL ds_new_customer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)

-- name: call:browse_category
CALL ds_browse_category($2, $1)

-- name: call:browse_actor
CALL ds_browse_actor($2, $1)

-- name: call:browse_title
CALL ds_browse_title($2, $1)

-- name: call:purchase
CALL ds_purchase($1, $2, $3, $4, $5, $6)
