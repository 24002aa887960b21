-- The CPU test's loop as MariaDB stored procedures. MariaDB has no
-- temporary routines, so each session makes sure the procedures exist in
-- the target database (IF NOT EXISTS: sessions set up at once must not
-- replace a procedure another one is running); the version suffix keeps
-- an older definition from standing in. Each returns the result printed to
-- two decimals and the loop's own elapsed seconds by the server's clock.

-- name: setup:numeric
CREATE PROCEDURE IF NOT EXISTS dbrig_cpu_numeric_v1(loops INT)
BEGIN
  -- Decimal arithmetic throughout, as Oracle's NUMBER does: SQRT of a
  -- DECIMAL is a DOUBLE in MariaDB, so it is cast back to 30 places.
  DECLARE n DECIMAL(65, 30) DEFAULT 0;
  DECLARE f INT DEFAULT 1;
  DECLARE began DATETIME(6) DEFAULT SYSDATE(6);
  WHILE f <= loops DO
    SET n = MOD(n, 999999) + CAST(SQRT(f) AS DECIMAL(65, 30));
    SET f = f + 1;
  END WHILE;
  SELECT CAST(CAST(n AS DECIMAL(20, 2)) AS CHAR), TIMESTAMPDIFF(MICROSECOND, began, SYSDATE(6)) / 1e6;
END

-- name: setup:float
CREATE PROCEDURE IF NOT EXISTS dbrig_cpu_float_v1(loops INT)
BEGIN
  DECLARE n DOUBLE DEFAULT 0;
  DECLARE f INT DEFAULT 1;
  DECLARE began DATETIME(6) DEFAULT SYSDATE(6);
  WHILE f <= loops DO
    SET n = MOD(n, 999999) + SQRT(f);
    SET f = f + 1;
  END WHILE;
  SELECT CAST(CAST(n AS DECIMAL(20, 2)) AS CHAR), TIMESTAMPDIFF(MICROSECOND, began, SYSDATE(6)) / 1e6;
END

-- name: loop_numeric
CALL dbrig_cpu_numeric_v1($1)

-- name: loop_float
CALL dbrig_cpu_float_v1($1)
