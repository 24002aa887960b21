-- The tables are prefixed ds_: tproc-c has an orders table of its own,
-- and both may share a database.
-- name: tables
CREATE TABLE ds_customers (customerid serial NOT NULL, firstname varchar(50) NOT NULL, lastname varchar(50) NOT NULL,
  address1 varchar(50) NOT NULL, address2 varchar(50), city varchar(50) NOT NULL, state varchar(50),
  zip varchar(9), country varchar(50) NOT NULL, region smallint NOT NULL, email varchar(50), phone varchar(50),
  creditcardtype int NOT NULL, creditcard varchar(50) NOT NULL, creditcardexpiration varchar(50) NOT NULL,
  username varchar(50) NOT NULL, password varchar(50) NOT NULL, age smallint, income int, gender varchar(1));
CREATE TABLE ds_cust_hist (customerid int NOT NULL, orderid int NOT NULL, prod_id int NOT NULL);
CREATE TABLE ds_orders (orderid serial NOT NULL, orderdate date NOT NULL, customerid int,
  netamount numeric(12,2) NOT NULL, tax numeric(12,2) NOT NULL, totalamount numeric(12,2) NOT NULL);
CREATE TABLE ds_orderlines (orderlineid smallint NOT NULL, orderid int NOT NULL, prod_id int NOT NULL,
  quantity smallint NOT NULL, orderdate date NOT NULL);
CREATE TABLE ds_products (prod_id serial NOT NULL, category smallint NOT NULL, title varchar(50) NOT NULL,
  actor varchar(50) NOT NULL, price numeric(12,2) NOT NULL, special smallint, common_prod_id int NOT NULL);
-- Stock changes on every purchase: room in each page for the new row
-- versions keeps the updates on their page.
CREATE TABLE ds_inventory (prod_id int NOT NULL, quan_in_stock int NOT NULL, sales int NOT NULL) WITH (fillfactor = 85);
CREATE TABLE ds_categories (category serial NOT NULL, categoryname varchar(50) NOT NULL);
CREATE TABLE ds_reorder (prod_id int NOT NULL, date_low date NOT NULL, quan_low int NOT NULL,
  date_reordered date, quan_reordered int, date_expected date);
CREATE TABLE dbrig_dvdstore (layout int NOT NULL, customers bigint NOT NULL, products bigint NOT NULL,
  orders_per_month bigint NOT NULL, seed bigint NOT NULL, built_at timestamptz NOT NULL);

-- Keys go on after the data, each statement on a connection of its own.
-- The product searches by actor and title are full-text searches, as the
-- original's are on PostgreSQL.
-- name: keys
ALTER TABLE ds_customers ADD PRIMARY KEY (customerid);
CREATE UNIQUE INDEX ix_cust_username ON ds_customers (username);
CREATE INDEX ix_cust_hist_customerid ON ds_cust_hist (customerid);
ALTER TABLE ds_orders ADD PRIMARY KEY (orderid);
CREATE INDEX ix_order_custid ON ds_orders (customerid);
CREATE UNIQUE INDEX ix_orderlines_orderid ON ds_orderlines (orderid, orderlineid);
CREATE INDEX ix_orderlines_orderdate ON ds_orderlines (orderdate, prod_id);
ALTER TABLE ds_products ADD PRIMARY KEY (prod_id);
CREATE INDEX ix_prod_category ON ds_products (category, special);
CREATE INDEX ix_prod_actor_fts ON ds_products USING gin (to_tsvector('simple', actor));
CREATE INDEX ix_prod_title_fts ON ds_products USING gin (to_tsvector('simple', title));
ALTER TABLE ds_inventory ADD PRIMARY KEY (prod_id);
ALTER TABLE ds_categories ADD PRIMARY KEY (category);
CREATE INDEX ix_reorder_prodid ON ds_reorder (prod_id);

-- New customers and orders take ids after the loaded ones.
-- name: sequences
SELECT setval(pg_get_serial_sequence('ds_customers', 'customerid'), (SELECT max(customerid) FROM ds_customers));
SELECT setval(pg_get_serial_sequence('ds_orders', 'orderid'), (SELECT max(orderid) FROM ds_orders));
SELECT setval(pg_get_serial_sequence('ds_products', 'prod_id'), (SELECT max(prod_id) FROM ds_products));
SELECT setval(pg_get_serial_sequence('ds_categories', 'category'), (SELECT max(category) FROM ds_categories));

-- name: analyze
ANALYZE

-- name: drop
DROP TABLE IF EXISTS dbrig_dvdstore, ds_customers, ds_cust_hist, ds_orders, ds_orderlines, ds_products, ds_inventory,
  ds_categories, ds_reorder CASCADE;
DROP FUNCTION IF EXISTS ds_login, ds_new_customer, ds_browse_category, ds_browse_actor, ds_browse_title, ds_purchase,
  ds_category_sales;

-- The tables of the workload's names that are here: any one of them is a
-- schema in the way, and dbrig drops only those its build record lists.
-- name: present
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND c.relname IN ('dbrig_dvdstore', 'ds_customers', 'ds_cust_hist', 'ds_orders', 'ds_orderlines', 'ds_products',
                    'ds_inventory', 'ds_categories', 'ds_reorder')

-- name: meta_write
INSERT INTO dbrig_dvdstore VALUES ($1, $2, $3, $4, $5, now())

-- name: size
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'r'
  AND c.relname IN ('ds_customers', 'ds_cust_hist', 'ds_orders', 'ds_orderlines', 'ds_products', 'ds_inventory', 'ds_categories', 'ds_reorder')
