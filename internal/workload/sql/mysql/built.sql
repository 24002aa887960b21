-- name: exists
SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'dbrig_built'
