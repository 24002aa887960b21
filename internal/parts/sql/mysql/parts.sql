-- The MySQL family's differences from generic/parts.sql.

-- name: insert_run
INSERT IGNORE INTO dbrig_part_runs (name, run_id, parts, state, leader, seed, config, config_sha256,
  created_us, deadline_us, start_us, open_us, close_us, hold_us, reason)
VALUES ($1, '', 0, 'idle', 0, 0, '', '', 0, 0, 0, 0, 0, 0, '')

-- The server's clock as the statement runs (SYSDATE, not NOW, which is
-- the statement's start), in the session's time zone both ways.
-- name: now_us
SELECT CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED)

-- Whether the barrier's tables are here.
-- name: exists
SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'dbrig_part_runs'
