-- A read and an update procedure per table, as on PostgreSQL. Each
-- commits its own transaction (see op.sql) and returns its row count as
-- its one result set.
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
  CALL {table}_write(lo, hi, val, heavy, changed);
  SELECT changed;
END

-- An update's own transaction, which the update procedure and the loop
-- both call: a procedure's SELECT would go to the client, not to the loop,
-- so the rows it changed come back as an OUT argument. Named under
-- proc:loop, so that a build made before loop mode gets it with the loop
-- (whose old update procedure does not call it).
-- name: proc:loop_write
CREATE PROCEDURE IF NOT EXISTS {table}_write(lo bigint, hi bigint, val varchar(4096), heavy boolean, OUT changed bigint)
BEGIN
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
END

-- Loop mode's call, PostgreSQL's loop (postgres/procs.sql) in MariaDB's
-- terms: the same choice of operations, each its own transaction, until
-- the next whole multiple of slice_ms on the server's clock (SYSDATE, the
-- clock now, not the statement's start), and the same counts, which come
-- back as the call's one row, in the order PostgreSQL's INOUT arguments
-- do. An update is a call of the table's write, as in procs mode; a read
-- is the read procedure's statement, written out here, as a procedure's
-- SELECT would go to the client, not to the loop. Blocks count one page
-- per row, as on PostgreSQL; the client adds the primary key's levels
-- above each row's leaf. MariaDB's RAND()
-- cannot be reseeded, so the loop draws from its own minimal-standard
-- generator, whose state the session keeps in @blockio_rng between calls:
-- a seed, when given, resets it.
-- name: proc:loop
CREATE PROCEDURE {table}_loop(seed double, slice_ms int, scale bigint, unit bigint, update_pct int, heavy boolean,
  hotspot int, hot_keys bigint, per_leaf bigint, height int, term int, width int,
  ops bigint, due int, updates bigint)
BEGIN
  DECLARE deadline decimal(20, 6) DEFAULT (FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000 / slice_ms) + 1) * slice_ms / 1000;
  DECLARE nreads, nwrites, nrows, blocks, top, lo, hi, got bigint DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  IF seed IS NOT NULL THEN
    SET @blockio_rng = 1 + FLOOR((seed + 1) / 2 * 2147483645);
  ELSEIF @blockio_rng IS NULL THEN
    SET @blockio_rng = 1 + FLOOR(RAND() * 2147483645);
  END IF;
  ops_loop: WHILE UNIX_TIMESTAMP(SYSDATE(6)) < deadline DO
    IF ops MOD 100 = 0 THEN
      SET due = update_pct;
    END IF;
    SET top = scale;
    IF hotspot > 0 AND (ops + 1) MOD hotspot = 0 THEN
      SET top = hot_keys;
    END IF;
    SET @blockio_rng = @blockio_rng * 48271 MOD 2147483647;
    SET hi = unit + (@blockio_rng - 1) * (top - unit + 1) DIV 2147483646;
    SET lo = hi - unit;
    IF due > 0 AND (hi MOD 2 = 0 OR 100 - ops MOD 100 <= due) THEN
      SET due = due - 1, updates = updates + 1, nwrites = nwrites + 1;
      CALL {table}_write(lo, hi, LPAD(CONCAT(term, ':', updates), width, 'y'), heavy, got);
    ELSE
      START TRANSACTION READ ONLY;
      SELECT count(n) INTO got FROM {table} FORCE INDEX ({table}_key) WHERE `key` > lo AND `key` <= hi;
      COMMIT;
      SET nreads = nreads + 1;
    END IF;
    SET ops = ops + 1, nrows = nrows + got;
    SET blocks = blocks + got + height + (hi - 1) DIV per_leaf - lo DIV per_leaf;
    IF got <> unit THEN
      LEAVE ops_loop;
    END IF;
  END WHILE;
  SELECT ops, due, updates, nreads, nwrites, nrows, blocks;
END
