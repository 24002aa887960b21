-- One pair of procedures per table, as on PostgreSQL. Each commits its
-- own transaction (see op.sql) and returns its row count as its one
-- result set.
-- name: proc:read
CREATE PROCEDURE {table}_read(lo bigint, hi bigint)
BEGIN
  START TRANSACTION READ ONLY;
  SELECT count(n) FROM {table} FORCE INDEX ({table}_key) WHERE `key` > lo AND `key` <= hi;
  COMMIT;
END

-- name: proc:update
CREATE PROCEDURE {table}_update(lo bigint, hi bigint, val varchar(4096), heavy boolean)
BEGIN
  DECLARE changed bigint;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  IF heavy THEN
    UPDATE {table} FORCE INDEX ({table}_key) SET n = n + 1, c1 = val, c2 = val, c3 = val, c4 = val, c5 = val, c6 = val, c7 = val, c8 = val
    WHERE `key` > lo AND `key` <= hi;
  ELSE
    UPDATE {table} FORCE INDEX ({table}_key) SET n = n + 1, c1 = val WHERE `key` > lo AND `key` <= hi;
  END IF;
  SET changed = ROW_COUNT();
  COMMIT;
  SELECT changed;
END
