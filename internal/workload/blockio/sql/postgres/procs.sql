-- One function per table, so each keeps its plan across calls: a function
-- that took the table's name would have to plan its query every time.
-- name: proc:read
CREATE FUNCTION {table}_read(lo bigint, hi bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  rows bigint;
BEGIN
  SELECT count(n) INTO rows FROM {table} WHERE key > lo AND key <= hi;
  RETURN rows;
END $$;

-- name: proc:update
CREATE FUNCTION {table}_update(lo bigint, hi bigint, val text, heavy boolean) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  rows bigint;
BEGIN
  IF heavy THEN
    UPDATE {table} SET n = n + 1, c1 = val, c2 = val, c3 = val, c4 = val, c5 = val, c6 = val, c7 = val, c8 = val
    WHERE key > lo AND key <= hi;
  ELSE
    UPDATE {table} SET n = n + 1, c1 = val WHERE key > lo AND key <= hi;
  END IF;
  GET DIAGNOSTICS rows = ROW_COUNT;
  RETURN rows;
END $$;
