-- The ids are rowids (INTEGER PRIMARY KEY): SQLite gives a new customer
-- or order the next one. SQLite's default build has no full-text index
-- (FTS5 needs a build tag), so the searches by actor and title look up
-- the whole name or title in an ordinary index: every search the driver
-- makes names a whole actor or a whole title, which an index finds.
-- name: tables
CREATE TABLE ds_customers (customerid INTEGER PRIMARY KEY, firstname TEXT NOT NULL, lastname TEXT NOT NULL,
  address1 TEXT NOT NULL, address2 TEXT, city TEXT NOT NULL, state TEXT, zip TEXT, country TEXT NOT NULL,
  region INTEGER NOT NULL, email TEXT, phone TEXT, creditcardtype INTEGER NOT NULL, creditcard TEXT NOT NULL,
  creditcardexpiration TEXT NOT NULL, username TEXT NOT NULL, password TEXT NOT NULL, age INTEGER,
  income INTEGER, gender TEXT);
CREATE TABLE ds_cust_hist (customerid INTEGER NOT NULL, orderid INTEGER NOT NULL, prod_id INTEGER NOT NULL);
CREATE TABLE ds_orders (orderid INTEGER PRIMARY KEY, orderdate TEXT NOT NULL, customerid INTEGER,
  netamount REAL NOT NULL, tax REAL NOT NULL, totalamount REAL NOT NULL);
CREATE TABLE ds_orderlines (orderlineid INTEGER NOT NULL, orderid INTEGER NOT NULL, prod_id INTEGER NOT NULL,
  quantity INTEGER NOT NULL, orderdate TEXT NOT NULL);
CREATE TABLE ds_products (prod_id INTEGER PRIMARY KEY, category INTEGER NOT NULL, title TEXT NOT NULL,
  actor TEXT NOT NULL, price REAL NOT NULL, special INTEGER, common_prod_id INTEGER NOT NULL);
CREATE TABLE ds_inventory (prod_id INTEGER PRIMARY KEY, quan_in_stock INTEGER NOT NULL, sales INTEGER NOT NULL);
CREATE TABLE ds_categories (category INTEGER PRIMARY KEY, categoryname TEXT NOT NULL);
CREATE TABLE ds_reorder (prod_id INTEGER NOT NULL, date_low TEXT NOT NULL, quan_low INTEGER NOT NULL,
  date_reordered TEXT, quan_reordered INTEGER, date_expected TEXT);
CREATE TABLE dbrig_dvdstore (layout INTEGER NOT NULL, customers INTEGER NOT NULL, products INTEGER NOT NULL,
  orders_per_month INTEGER NOT NULL, seed INTEGER NOT NULL, built_at TEXT NOT NULL);

-- name: keys
CREATE UNIQUE INDEX ix_cust_username ON ds_customers (username);
CREATE INDEX ix_cust_hist_customerid ON ds_cust_hist (customerid);
CREATE INDEX ix_order_custid ON ds_orders (customerid);
CREATE UNIQUE INDEX ix_orderlines_orderid ON ds_orderlines (orderid, orderlineid);
CREATE INDEX ix_orderlines_orderdate ON ds_orderlines (orderdate, prod_id);
CREATE INDEX ix_prod_category ON ds_products (category, special);
CREATE INDEX ix_prod_actor ON ds_products (actor);
CREATE INDEX ix_prod_title ON ds_products (title);
CREATE INDEX ix_reorder_prodid ON ds_reorder (prod_id);

-- name: analyze
ANALYZE

-- The tables of the workload's names that are here (see postgres/schema.sql);
-- a drop drops each of them (workload.Record.Drop).
-- name: present
SELECT name FROM sqlite_master WHERE type = 'table'
  AND name IN ('dbrig_dvdstore', 'ds_customers', 'ds_cust_hist', 'ds_orders', 'ds_orderlines', 'ds_products',
               'ds_inventory', 'ds_categories', 'ds_reorder')

-- name: meta_write
INSERT INTO dbrig_dvdstore VALUES ($1, $2, $3, $4, $5, datetime('now'))

-- name: size
SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()
