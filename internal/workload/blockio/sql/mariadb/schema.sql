-- InnoDB keeps a table's rows in the leaves of its primary key's b-tree,
-- and puts at least two rows on a leaf: its largest row is half a page,
-- and both its inserts and its sorted index builds take a second row into
-- any page it fits. So each row of the method has a pad row beside it
-- that fills the page's second place: rows over a third of the usable
-- page, both keyed by pos, the row's pad 0 and the pad's 1, so that the
-- sorted build of the primary key puts exactly a row and its pad on each
-- leaf. The pads' keys are negative: no read reaches them.

-- name: meta
CREATE TABLE dbrig_blockio (layout int NOT NULL, scale bigint NOT NULL, `schemas` int NOT NULL,
  seed bigint NOT NULL, block_size int NOT NULL, blocks bigint NOT NULL,
  index_pages bigint NOT NULL, built_at datetime NOT NULL) ENGINE = InnoDB

-- The page size, and the width of each of the eight filler columns: 800
-- bytes on 16 KB pages make rows of about 6,460 bytes, of which two fit a
-- page's 16,252 free bytes and three do not, and none is moved off the page.
-- name: geometry
SELECT @@innodb_page_size, @@innodb_page_size * 25 DIV 512

-- The rows load with no primary key (InnoDB's hidden row id keeps them in
-- load order, the cheapest to append); the key step builds the real one.
-- name: table
CREATE TABLE {table} (pos bigint NOT NULL, pad tinyint NOT NULL DEFAULT 0, `key` bigint NOT NULL, n bigint NOT NULL,
  c1 varchar({width}) NOT NULL, c2 varchar({width}) NOT NULL, c3 varchar({width}) NOT NULL, c4 varchar({width}) NOT NULL,
  c5 varchar({width}) NOT NULL, c6 varchar({width}) NOT NULL, c7 varchar({width}) NOT NULL, c8 varchar({width}) NOT NULL)
  CHARACTER SET ascii ENGINE = InnoDB ROW_FORMAT = DYNAMIC

-- Each row's pad, then the primary key, built sorted page by page in one
-- rebuild, and the index on key.
-- name: key
INSERT INTO {table} (pos, pad, `key`, n, c1, c2, c3, c4, c5, c6, c7, c8)
  SELECT pos, 1, -pos, 0, c1, c2, c3, c4, c5, c6, c7, c8 FROM {table};
ALTER TABLE {table} ADD PRIMARY KEY (pos, pad), ADD UNIQUE INDEX {table}_key (`key`)

-- Renews InnoDB's persistent statistics, the page counts among them; its
-- reply is rows.
-- name: stats
ANALYZE TABLE {table}

-- The primary key's leaf pages (where the rows are, and where InnoDB puts
-- any column it moves off a row's page, so that an overflow shows as more
-- pages than rows), the rows that are not pads, the key index's pages, and
-- no overflow pages of their own (see the first). The statistics are
-- renewed first ("stats"): the count is the tree's now.
-- name: pages
SELECT (SELECT stat_value FROM mysql.innodb_index_stats WHERE database_name = DATABASE() AND table_name = '{table}'
    AND index_name = 'PRIMARY' AND stat_name = 'n_leaf_pages'),
  (SELECT count(*) FROM {table} WHERE pad = 0),
  (SELECT stat_value FROM mysql.innodb_index_stats WHERE database_name = DATABASE() AND table_name = '{table}'
    AND index_name = '{table}_key' AND stat_name = 'size'),
  0

-- The pages InnoDB reads to find one row by its primary key, the tree's
-- levels, as its own count of page requests gives them; the reader takes
-- the least of a few tries, since the count is the whole server's.
-- name: row_pages
BEGIN NOT ATOMIC
  DECLARE was bigint;
  SELECT variable_value INTO was FROM information_schema.global_status WHERE variable_name = 'INNODB_BUFFER_POOL_READ_REQUESTS';
  DO (SELECT n FROM {table} WHERE pos = 1 AND pad = 0);
  SELECT CAST(variable_value - was AS SIGNED) FROM information_schema.global_status WHERE variable_name = 'INNODB_BUFFER_POOL_READ_REQUESTS';
END

-- name: drop_table
DROP TABLE IF EXISTS {table};
DROP PROCEDURE IF EXISTS {table}_read;
DROP PROCEDURE IF EXISTS {table}_update;
DROP PROCEDURE IF EXISTS {table}_write;
DROP PROCEDURE IF EXISTS {table}_loop

-- name: drop_meta
DROP TABLE IF EXISTS dbrig_blockio

-- The tables of the workload's names that are here (see postgres/schema.sql).
-- name: present
SELECT table_name FROM information_schema.tables
WHERE table_schema = DATABASE() AND (table_name REGEXP '^blockio[0-9]+$' OR table_name = 'dbrig_blockio')

-- name: meta_write
INSERT INTO dbrig_blockio VALUES ($1, $2, $3, $4, $5, $6, $7, now())

-- name: meta_read
SELECT layout, scale, `schemas`, seed, block_size, blocks, index_pages FROM dbrig_blockio

-- name: size
SELECT coalesce(sum(data_length + index_length), 0) FROM information_schema.tables
WHERE table_schema = DATABASE() AND table_name REGEXP '^blockio[0-9]+$'

-- InnoDB's page requests (logical reads) and the pages it had to read in
-- (cache misses; read-ahead apart), the whole server's.
-- name: mark
SELECT CAST(SUM(IF(variable_name = 'INNODB_BUFFER_POOL_READ_REQUESTS', variable_value, 0)) AS SIGNED),
  CAST(SUM(IF(variable_name = 'INNODB_BUFFER_POOL_READS', variable_value, 0)) AS SIGNED)
FROM information_schema.global_status
WHERE variable_name IN ('INNODB_BUFFER_POOL_READ_REQUESTS', 'INNODB_BUFFER_POOL_READS')

-- name: loop_present
SELECT count(*) > 0 FROM information_schema.routines
WHERE routine_schema = DATABASE() AND routine_name = '{table}_loop'
