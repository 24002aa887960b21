-- SQLite's differences from generic/tx.sql.

-- Writers begin IMMEDIATE: taking the write lock up front means a
-- transaction never has to upgrade a read lock midway, which SQLite can only
-- refuse (SQLITE_BUSY) rather than wait for.
-- name: begin_write
BEGIN IMMEDIATE
