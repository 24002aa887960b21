-- Each operation is one call of the table's function (procs.sql).
-- name: call:read
SELECT {table}_read($1, $2)

-- name: call:update_lite
SELECT {table}_update($1, $2, $3, false)

-- name: call:update_heavy
SELECT {table}_update($1, $2, $3, true)

-- A bitmap scan would sort the blocks and read them in order, with
-- prefetching: not the random single-block reads the method measures.
-- name: session
SET enable_bitmapscan = off;
