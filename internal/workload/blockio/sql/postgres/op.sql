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

-- Loop mode's one statement: a call of the table's loop (procs.sql), which
-- runs operations inside the database for up to $2 ms.
-- name: call:loop
CALL {table}_loop($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 0, 0, 0, 0)
