-- name: meta
CREATE TABLE dbrig_blockio (layout int NOT NULL, scale bigint NOT NULL, schemas int NOT NULL,
  seed bigint NOT NULL, block_size int NOT NULL, blocks bigint NOT NULL,
  index_pages bigint NOT NULL, built_at timestamptz NOT NULL);

-- The block size, and the width of each of the eight filler columns. With
-- fillfactor 10 a heap page takes a second row only while 90% of it would
-- stay free, which any row over about 400 bytes breaks: one row, one page.
-- name: geometry
SELECT current_setting('block_size')::int, current_setting('block_size')::int / 64

-- name: table
CREATE TABLE {table} (pos bigint NOT NULL, key bigint NOT NULL, n bigint NOT NULL,
  c1 char({width}) NOT NULL, c2 char({width}) NOT NULL, c3 char({width}) NOT NULL, c4 char({width}) NOT NULL,
  c5 char({width}) NOT NULL, c6 char({width}) NOT NULL, c7 char({width}) NOT NULL, c8 char({width}) NOT NULL)
  WITH (fillfactor = 10)

-- name: key
CREATE UNIQUE INDEX {table}_key ON {table} (key)

-- VACUUM sets the visibility map and the page counts; ANALYZE the plans.
-- name: analyze
VACUUM ANALYZE {table}

-- The table's heap pages, its rows, the index's pages (the metapage left
-- out) and the pages a row overflowed to (TOAST; none for rows this size).
-- name: pages
SELECT pg_relation_size('{table}') / current_setting('block_size')::int, (SELECT count(*) FROM {table}),
  pg_relation_size('{table}_key') / current_setting('block_size')::int - 1,
  coalesce((SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE oid = '{table}'::regclass AND reltoastrelid <> 0), 0)
    / current_setting('block_size')::int

-- The rows that share their heap block with another row (0 while each is
-- alone in its own): the check counts them when updates have left the
-- table more blocks than rows.
-- name: shared_rows
SELECT count(*) - count(DISTINCT (ctid::text::point)[0]) FROM {table}

-- name: drop_table
DROP TABLE IF EXISTS {table} CASCADE;
DROP FUNCTION IF EXISTS {table}_read(bigint, bigint);
DROP FUNCTION IF EXISTS {table}_update(bigint, bigint, text, boolean);
DROP PROCEDURE IF EXISTS {table}_loop;

-- name: drop_meta
DROP TABLE IF EXISTS dbrig_blockio

-- The tables of the workload's names that are here: any one of them is a
-- schema in the way, and dbrig drops only those its build record lists.
-- name: present
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'r' AND (c.relname ~ '^blockio[0-9]+$' OR c.relname = 'dbrig_blockio')

-- name: meta_write
INSERT INTO dbrig_blockio VALUES ($1, $2, $3, $4, $5, $6, $7, now())

-- name: meta_read
SELECT layout, scale, schemas, seed, block_size, blocks, index_pages FROM dbrig_blockio

-- name: size
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname ~ '^blockio[0-9]+$'

-- The database's logical reads (blocks found in its buffer cache or read
-- into it) and its physical reads (the blocks it had to read in). The
-- statistics of a busy backend reach this view within about a second.
-- name: mark
SELECT blks_hit + blks_read, blks_read FROM pg_stat_database WHERE datname = current_database()

-- Whether a table has loop mode's procedure (procs.sql): builds made
-- before loop mode have not, and a loop-mode run adds it.
-- name: loop_present
SELECT to_regproc('{table}_loop') IS NOT NULL
