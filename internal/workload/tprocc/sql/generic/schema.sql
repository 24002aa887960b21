-- The schema's statements that read the same everywhere; each dialect's
-- schema.sql has the tables, keys and catalog queries.

-- name: analyze
ANALYZE;

-- name: meta_read
SELECT layout, warehouses, seed, c_load FROM dbrig_tprocc

-- name: meta_write
INSERT INTO dbrig_tprocc (layout, warehouses, seed, c_load, built_at) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)

-- Only committed New-Orders advance d_next_o_id, so the New-Orders committed
-- between two readings of this are their difference.
-- name: mark
SELECT sum(d_next_o_id) FROM district
