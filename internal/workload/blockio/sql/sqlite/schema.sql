-- The rowid (pos) is where a row sits: rows go in by pos, so the table's
-- leaves hold them in that order, and the key, a permutation of pos, is
-- what the index orders. A range of keys is then rows scattered over the
-- table, a leaf page each.
-- A block is a page of the file, whatever size the file has (4 KB unless
-- it was made otherwise): the page size of a file in WAL mode is fixed.

-- name: meta
CREATE TABLE dbrig_blockio (layout INTEGER NOT NULL, scale INTEGER NOT NULL, schemas INTEGER NOT NULL,
  seed INTEGER NOT NULL, block_size INTEGER NOT NULL, blocks INTEGER NOT NULL,
  index_pages INTEGER NOT NULL, built_at TEXT NOT NULL)

-- A leaf keeps a row of up to U-35 bytes (U the usable page size) and two
-- rows only while both fit: eight columns of 6/80 of a page make a row of
-- about 60% of one, so each row fills a leaf of its own with no overflow.
-- name: geometry
SELECT page_size, page_size * 6 / 80 FROM pragma_page_size()

-- name: table
CREATE TABLE {table} (pos INTEGER PRIMARY KEY, key INTEGER NOT NULL, n INTEGER NOT NULL,
  c1 TEXT NOT NULL, c2 TEXT NOT NULL, c3 TEXT NOT NULL, c4 TEXT NOT NULL,
  c5 TEXT NOT NULL, c6 TEXT NOT NULL, c7 TEXT NOT NULL, c8 TEXT NOT NULL)

-- name: key
CREATE UNIQUE INDEX {table}_key ON {table} (key)

-- name: analyze
ANALYZE {table}

-- The pages the file uses. SQLite counts pages per table only with the
-- dbstat table, which its default build leaves out; with one writer, the
-- build measures what a load and an index add instead.
-- name: file_pages
SELECT page_count - freelist_count FROM pragma_page_count(), pragma_freelist_count()

-- name: rows
SELECT count(*) FROM {table}

-- name: drop_table
DROP TABLE IF EXISTS {table};

-- name: drop_meta
DROP TABLE IF EXISTS dbrig_blockio

-- The tables of the workload's names that are here (see postgres/schema.sql).
-- name: present
SELECT name FROM sqlite_master WHERE type = 'table' AND (name GLOB 'blockio[0-9]*' OR name = 'dbrig_blockio')

-- name: meta_write
INSERT INTO dbrig_blockio VALUES ($1, $2, $3, $4, $5, $6, $7, datetime('now'))

-- name: meta_read
SELECT layout, scale, schemas, seed, block_size, blocks, index_pages FROM dbrig_blockio

-- name: size
SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()
