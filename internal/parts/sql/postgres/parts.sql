-- PostgreSQL's differences from generic/parts.sql.

-- The server's clock as the statement runs, not as its transaction began.
-- name: now_us
SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint

-- Whether the barrier's tables are here, where it makes them.
-- name: exists
SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = 'dbrig_part_runs'
