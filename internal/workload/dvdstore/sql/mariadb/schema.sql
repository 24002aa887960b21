-- MariaDB's schema: InnoDB tables with PostgreSQL's columns, keys and
-- indexes (see postgres/schema.sql). Money is DECIMAL, exact as
-- PostgreSQL's numeric, so the reports' totals are exact to the cent.
--
-- InnoDB stores a table in its primary key, so the keys go on at creation:
-- added after the load, each would copy the whole table into a new one.
-- The loader writes rows in key order, so the inserts append. The order
-- lines' unique (orderid, orderlineid) is their primary key here. New
-- customers and orders take AUTO_INCREMENT ids after the largest loaded,
-- which is where InnoDB starts its counter: no sequences to set.
-- name: tables
CREATE TABLE ds_customers (customerid int NOT NULL AUTO_INCREMENT, firstname varchar(50) NOT NULL,
  lastname varchar(50) NOT NULL, address1 varchar(50) NOT NULL, address2 varchar(50), city varchar(50) NOT NULL,
  state varchar(50), zip varchar(9), country varchar(50) NOT NULL, region smallint NOT NULL, email varchar(50),
  phone varchar(50), creditcardtype int NOT NULL, creditcard varchar(50) NOT NULL,
  creditcardexpiration varchar(50) NOT NULL, username varchar(50) NOT NULL, password varchar(50) NOT NULL,
  age smallint, income int, gender varchar(1),
  PRIMARY KEY (customerid)) ENGINE = InnoDB;
CREATE TABLE ds_cust_hist (customerid int NOT NULL, orderid int NOT NULL, prod_id int NOT NULL) ENGINE = InnoDB;
CREATE TABLE ds_orders (orderid int NOT NULL AUTO_INCREMENT, orderdate date NOT NULL, customerid int,
  netamount decimal(12,2) NOT NULL, tax decimal(12,2) NOT NULL, totalamount decimal(12,2) NOT NULL,
  PRIMARY KEY (orderid)) ENGINE = InnoDB;
CREATE TABLE ds_orderlines (orderlineid smallint NOT NULL, orderid int NOT NULL, prod_id int NOT NULL,
  quantity smallint NOT NULL, orderdate date NOT NULL,
  PRIMARY KEY (orderid, orderlineid)) ENGINE = InnoDB;
CREATE TABLE ds_products (prod_id int NOT NULL AUTO_INCREMENT, category smallint NOT NULL, title varchar(50) NOT NULL,
  actor varchar(50) NOT NULL, price decimal(12,2) NOT NULL, special smallint, common_prod_id int NOT NULL,
  PRIMARY KEY (prod_id)) ENGINE = InnoDB;
CREATE TABLE ds_inventory (prod_id int NOT NULL, quan_in_stock int NOT NULL, sales int NOT NULL,
  PRIMARY KEY (prod_id)) ENGINE = InnoDB;
CREATE TABLE ds_categories (category int NOT NULL AUTO_INCREMENT, categoryname varchar(50) NOT NULL,
  PRIMARY KEY (category)) ENGINE = InnoDB;
CREATE TABLE ds_reorder (prod_id int NOT NULL, date_low date NOT NULL, quan_low int NOT NULL,
  date_reordered date, quan_reordered int, date_expected date) ENGINE = InnoDB;
CREATE TABLE dbrig_dvdstore (layout int NOT NULL, customers bigint NOT NULL, products bigint NOT NULL,
  orders_per_month bigint NOT NULL, seed bigint NOT NULL, built_at datetime NOT NULL) ENGINE = InnoDB;

-- The secondary indexes, built sorted after the load, each statement on a
-- connection of its own. The searches by actor and title are full-text
-- searches, as on PostgreSQL: InnoDB's FULLTEXT indexes, whose words
-- (three letters or more, none a stop word) are every name's and title's.
-- name: keys
CREATE UNIQUE INDEX ix_cust_username ON ds_customers (username);
CREATE INDEX ix_cust_hist_customerid ON ds_cust_hist (customerid);
CREATE INDEX ix_order_custid ON ds_orders (customerid);
CREATE INDEX ix_orderlines_orderdate ON ds_orderlines (orderdate, prod_id);
CREATE INDEX ix_prod_category ON ds_products (category, special);
CREATE FULLTEXT INDEX ix_prod_actor_fts ON ds_products (actor);
CREATE FULLTEXT INDEX ix_prod_title_fts ON ds_products (title);
CREATE INDEX ix_reorder_prodid ON ds_reorder (prod_id);

-- name: analyze
ANALYZE TABLE ds_customers, ds_cust_hist, ds_orders, ds_orderlines, ds_products, ds_inventory, ds_categories, ds_reorder

-- The routines go with the tables: a build that finds no tables creates
-- them again, and CREATE PROCEDURE refuses a name that exists.
-- name: drop
DROP TABLE IF EXISTS dbrig_dvdstore, ds_customers, ds_cust_hist, ds_orders, ds_orderlines, ds_products, ds_inventory,
  ds_categories, ds_reorder;
DROP PROCEDURE IF EXISTS ds_login;
DROP PROCEDURE IF EXISTS ds_new_customer;
DROP PROCEDURE IF EXISTS ds_browse_category;
DROP PROCEDURE IF EXISTS ds_browse_actor;
DROP PROCEDURE IF EXISTS ds_browse_title;
DROP PROCEDURE IF EXISTS ds_purchase;
DROP PROCEDURE IF EXISTS ds_category_sales;

-- The tables and routines of the workload's names that are here: any one
-- of them is a schema in the way, and dbrig drops only those its build
-- record lists.
-- name: present
SELECT table_name FROM information_schema.tables
WHERE table_schema = DATABASE()
  AND table_name IN ('dbrig_dvdstore', 'ds_customers', 'ds_cust_hist', 'ds_orders', 'ds_orderlines', 'ds_products',
                     'ds_inventory', 'ds_categories', 'ds_reorder')
UNION ALL
SELECT routine_name FROM information_schema.routines
WHERE routine_schema = DATABASE()
  AND routine_name IN ('ds_login', 'ds_new_customer', 'ds_browse_category', 'ds_browse_actor', 'ds_browse_title',
                       'ds_purchase', 'ds_category_sales')

-- name: meta_write
INSERT INTO dbrig_dvdstore VALUES ($1, $2, $3, $4, $5, now())

-- InnoDB's own estimate, which the build's ANALYZE TABLE has just renewed.
-- name: size
SELECT coalesce(sum(data_length + index_length), 0) FROM information_schema.tables
WHERE table_schema = DATABASE()
  AND table_name IN ('ds_customers', 'ds_cust_hist', 'ds_orders', 'ds_orderlines', 'ds_products', 'ds_inventory',
                     'ds_categories', 'ds_reorder')
