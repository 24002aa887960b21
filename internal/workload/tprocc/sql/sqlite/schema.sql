-- SQLite has no clustered index but a WITHOUT ROWID table: the primary key
-- is the table, so lookups by key read one b-tree instead of two. The
-- loader writes rows in key order, so keys can go on at creation.
-- name: tables
CREATE TABLE warehouse (
  w_id INTEGER NOT NULL PRIMARY KEY, w_name TEXT, w_street_1 TEXT, w_street_2 TEXT,
  w_city TEXT, w_state TEXT, w_zip TEXT, w_tax REAL, w_ytd REAL) WITHOUT ROWID;
CREATE TABLE district (
  d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name TEXT, d_street_1 TEXT, d_street_2 TEXT,
  d_city TEXT, d_state TEXT, d_zip TEXT, d_tax REAL, d_ytd REAL, d_next_o_id INTEGER,
  PRIMARY KEY (d_w_id, d_id)) WITHOUT ROWID;
CREATE TABLE customer (
  c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, c_first TEXT, c_middle TEXT,
  c_last TEXT, c_street_1 TEXT, c_street_2 TEXT, c_city TEXT, c_state TEXT,
  c_zip TEXT, c_phone TEXT, c_since TIMESTAMP, c_credit TEXT, c_credit_lim REAL,
  c_discount REAL, c_balance REAL, c_ytd_payment REAL, c_payment_cnt INTEGER,
  c_delivery_cnt INTEGER, c_data TEXT, PRIMARY KEY (c_w_id, c_d_id, c_id)) WITHOUT ROWID;
CREATE TABLE history (
  h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER, h_date TIMESTAMP,
  h_amount REAL, h_data TEXT);
CREATE TABLE new_order (no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)) WITHOUT ROWID;
CREATE TABLE orders (
  o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER, o_entry_d TIMESTAMP,
  o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER,
  PRIMARY KEY (o_w_id, o_d_id, o_id)) WITHOUT ROWID;
CREATE TABLE order_line (
  ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, ol_number INTEGER NOT NULL,
  ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d TIMESTAMP, ol_quantity INTEGER, ol_amount REAL,
  ol_dist_info TEXT, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) WITHOUT ROWID;
CREATE TABLE item (i_id INTEGER NOT NULL PRIMARY KEY, i_im_id INTEGER, i_name TEXT, i_price REAL,
  i_data TEXT) WITHOUT ROWID;
CREATE TABLE stock (
  s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER,
  s_dist_01 TEXT, s_dist_02 TEXT, s_dist_03 TEXT, s_dist_04 TEXT, s_dist_05 TEXT,
  s_dist_06 TEXT, s_dist_07 TEXT, s_dist_08 TEXT, s_dist_09 TEXT, s_dist_10 TEXT,
  s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data TEXT,
  PRIMARY KEY (s_w_id, s_i_id)) WITHOUT ROWID;
CREATE TABLE dbrig_tprocc (layout INTEGER NOT NULL, warehouses INTEGER NOT NULL, seed INTEGER NOT NULL,
  c_load INTEGER NOT NULL, built_at TEXT NOT NULL);

-- name: keys
CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE UNIQUE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);

-- The tables of the workload's names that are here (see postgres/schema.sql);
-- a drop drops each of them (workload.Record.Drop).
-- name: present
SELECT name FROM sqlite_master WHERE type = 'table'
  AND name IN ('dbrig_tprocc', 'warehouse', 'district', 'customer', 'history', 'new_order',
               'orders', 'order_line', 'item', 'stock')

-- name: size
SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()
