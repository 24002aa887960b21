-- The columns a transaction updates sit side by side (stock's four that
-- New-Order changes, customer's four that Payment and Delivery do, after
-- the fields they never change): PostgreSQL logs an update that stays on
-- its page as the bytes between the unchanged prefix and suffix of the
-- row, and with s_dist_01-10 between s_quantity and s_ytd each stock
-- update logged those 240 bytes too. TPC-C fixes each table's fields and
-- their types (clause 1.3), not the order a row stores them in, and leaves
-- the physical layout of records to the implementation (clause 1.4).
-- name: tables
CREATE TABLE warehouse (
  w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
  w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (
  d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int);
CREATE TABLE customer (
  c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL, c_first varchar(16), c_middle char(2),
  c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2),
  c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2), c_credit_lim numeric(12,2),
  c_discount numeric(4,4), c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt int,
  c_delivery_cnt int, c_data varchar(500));
CREATE TABLE history (
  h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamp,
  h_amount numeric(6,2), h_data varchar(24));
CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL);
CREATE TABLE orders (
  o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int, o_entry_d timestamp,
  o_carrier_id int, o_ol_cnt int, o_all_local int);
CREATE TABLE order_line (
  ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL, ol_number int NOT NULL, ol_i_id int,
  ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2), ol_dist_info char(24));
CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50));
CREATE TABLE stock (
  s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int, s_ytd int, s_order_cnt int, s_remote_cnt int,
  s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
  s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24),
  s_data varchar(50));
CREATE TABLE dbrig_tprocc (layout int NOT NULL, warehouses int NOT NULL, seed bigint NOT NULL,
  c_load int NOT NULL, built_at timestamptz NOT NULL);

-- VACUUM as well as ANALYZE: the load's inserts leave every table due for
-- autovacuum (autovacuum_vacuum_insert_threshold), which would vacuum them
-- a few seconds into the first run, 18 transactions in the measured
-- database's own count for one warehouse. After it, autovacuum finds
-- nothing to do; it took 0.2 s more for 4 warehouses.
-- name: analyze
VACUUM (ANALYZE)

-- The same for one table: the build runs it for each table once its keys
-- are on, while other tables still load (workload.Tables), instead of the
-- whole database at the end on one session.
-- name: analyze_table
VACUUM (ANALYZE) {table}

-- Keys go on after the data: one sorted build beats a million index inserts.
-- Each statement runs on its own connection, in parallel.
-- name: keys
ALTER TABLE warehouse ADD PRIMARY KEY (w_id);
ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first);
ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
CREATE UNIQUE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE item ADD PRIMARY KEY (i_id);
ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id);

-- name: drop
DROP TABLE IF EXISTS dbrig_tprocc, warehouse, district, customer, history, new_order, orders,
  order_line, item, stock CASCADE;

-- The tables of the workload's names that are here: any one of them is a
-- schema (perhaps half-built, or another tool's) in the way, and dbrig
-- drops only those its build record lists.
-- name: present
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND c.relname IN ('dbrig_tprocc', 'warehouse', 'district', 'customer', 'history', 'new_order',
                    'orders', 'order_line', 'item', 'stock')

-- name: size
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'r'
  AND c.relname IN ('warehouse', 'district', 'customer', 'history', 'new_order', 'orders', 'order_line', 'item', 'stock')
