-- A session's operations. {table} is one of the schema's tables, blockio1
-- to blockioN. The keys in ($1, $2] sit each in a block of its own, in
-- random physical order, so a range of WORK_UNIT keys is WORK_UNIT
-- single-block reads through the index. count(n) reads a column the index
-- does not hold, so the rows themselves are read: no index-only scan.

-- name: read
SELECT count(n) FROM {table} WHERE key > $1 AND key <= $2

-- "lite" redo changes two columns, "heavy" all nine. $3 carries the
-- session and the operation, so that no update writes what was there.
-- name: update_lite
UPDATE {table} SET n = n + 1, c1 = $3 WHERE key > $1 AND key <= $2

-- name: update_heavy
UPDATE {table} SET n = n + 1, c1 = $3, c2 = $3, c3 = $3, c4 = $3, c5 = $3, c6 = $3, c7 = $3, c8 = $3
WHERE key > $1 AND key <= $2
