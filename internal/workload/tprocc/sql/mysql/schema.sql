-- The MySQL family's schema: InnoDB tables with PostgreSQL's columns, keys
-- and indexes. Money is DECIMAL, exact as PostgreSQL's numeric.
--
-- InnoDB stores a table in its primary key, so the key goes on at creation:
-- added after the load, it would copy the whole table into a new one. The
-- loader writes each warehouse's rows in key order, so the inserts append.
-- The secondary indexes are built after the load, sorted, as on PostgreSQL.
-- name: tables
CREATE TABLE warehouse (
  w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
  w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,4), w_ytd decimal(12,2),
  PRIMARY KEY (w_id)) ENGINE = InnoDB;
CREATE TABLE district (
  d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,4), d_ytd decimal(12,2), d_next_o_id int,
  PRIMARY KEY (d_w_id, d_id)) ENGINE = InnoDB;
CREATE TABLE customer (
  c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL, c_first varchar(16), c_middle char(2),
  c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2),
  c_zip char(9), c_phone char(16), c_since datetime, c_credit char(2), c_credit_lim decimal(12,2),
  c_discount decimal(4,4), c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt int,
  c_delivery_cnt int, c_data varchar(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id)) ENGINE = InnoDB;
CREATE TABLE history (
  h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date datetime,
  h_amount decimal(6,2), h_data varchar(24)) ENGINE = InnoDB;
CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)) ENGINE = InnoDB;
CREATE TABLE orders (
  o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int, o_entry_d datetime,
  o_carrier_id int, o_ol_cnt int, o_all_local int,
  PRIMARY KEY (o_w_id, o_d_id, o_id)) ENGINE = InnoDB;
CREATE TABLE order_line (
  ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL, ol_number int NOT NULL, ol_i_id int,
  ol_supply_w_id int, ol_delivery_d datetime, ol_quantity int, ol_amount decimal(6,2), ol_dist_info char(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE = InnoDB;
CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50),
  PRIMARY KEY (i_id)) ENGINE = InnoDB;
CREATE TABLE stock (
  s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int,
  s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
  s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24),
  s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50),
  PRIMARY KEY (s_w_id, s_i_id)) ENGINE = InnoDB;
CREATE TABLE dbrig_tprocc (layout int NOT NULL, warehouses int NOT NULL, seed bigint NOT NULL,
  c_load int NOT NULL, built_at datetime NOT NULL) ENGINE = InnoDB;

-- Each statement runs on its own connection, in parallel.
-- name: keys
CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE UNIQUE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);

-- name: analyze
ANALYZE TABLE warehouse, district, customer, history, new_order, orders, order_line, item, stock

-- The routines go with the tables: a build that finds no tables creates
-- them again, and CREATE PROCEDURE refuses a name that exists.
-- name: drop
DROP TABLE IF EXISTS dbrig_tprocc, warehouse, district, customer, history, new_order, orders,
  order_line, item, stock;
DROP PROCEDURE IF EXISTS tprocc_neword;
DROP PROCEDURE IF EXISTS tprocc_payment;
DROP PROCEDURE IF EXISTS tprocc_ostat;
DROP PROCEDURE IF EXISTS tprocc_delivery;
DROP PROCEDURE IF EXISTS tprocc_slev;

-- The tables and routines of the workload's names that are here: any one
-- of them is a schema (perhaps half-built, or another tool's) in the way,
-- and dbrig drops only those its build record lists.
-- name: present
SELECT table_name FROM information_schema.tables
WHERE table_schema = DATABASE()
  AND table_name IN ('dbrig_tprocc', 'warehouse', 'district', 'customer', 'history', 'new_order',
                     'orders', 'order_line', 'item', 'stock')
UNION ALL
SELECT routine_name FROM information_schema.routines
WHERE routine_schema = DATABASE()
  AND routine_name IN ('tprocc_neword', 'tprocc_payment', 'tprocc_ostat', 'tprocc_delivery', 'tprocc_slev')

-- InnoDB's own estimate, which the build's ANALYZE TABLE has just renewed.
-- name: size
SELECT coalesce(sum(data_length + index_length), 0) FROM information_schema.tables
WHERE table_schema = DATABASE()
  AND table_name IN ('warehouse', 'district', 'customer', 'history', 'new_order', 'orders', 'order_line', 'item', 'stock')
