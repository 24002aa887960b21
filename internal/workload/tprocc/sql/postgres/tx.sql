-- PostgreSQL's additions to generic/tx.sql.

-- The server-side transactions of procs.sql: one statement, one round trip.
-- name: call:neword
-- Money crosses the wire as float8: pgx turns numeric into and out of
-- float64 through text and big.Int, which cost the client about a tenth
-- of its CPU per transaction.
SELECT order_id, total_amount::float8 FROM tprocc_neword($1, $2, $3, $4, $5, $6, $7)

-- name: call:payment
SELECT cust_id, cust_balance::float8 FROM tprocc_payment($1, $2, $3, $4, $5, $6, $7, $8::float8::numeric, $9)

-- name: call:ostat
SELECT cust_id, coalesce(order_id, 0), coalesce(cardinality(line_items), 0) FROM tprocc_ostat($1, $2, $3, $4, $5)

-- name: call:delivery
SELECT tprocc_delivery($1, $2, $3)

-- name: call:slev
SELECT tprocc_slev($1, $2, $3)
