-- name: exists
SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'dbrig_built'
