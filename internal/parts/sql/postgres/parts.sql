-- PostgreSQL's differences from generic/parts.sql.

-- The server's clock as the statement runs, not as its transaction began.
-- name: now_us
SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
