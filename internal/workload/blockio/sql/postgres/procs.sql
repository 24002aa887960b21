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

-- Loop mode's call: a session's operations chosen and run inside the
-- database, as the client chooses them (terminal.go's Next), by the
-- functions procs mode calls, each its own transaction as in the other
-- modes, until the next whole multiple of slice_ms on the server's clock,
-- so that every session's call ends at the same instant and the window's
-- edges find them all between calls. What spans calls comes in and goes
-- out: the operations so far, the updates still due in the current
-- hundred and the updates so far. The call's own reads, updates, rows and
-- blocks (each operation's rows and the index pages its range reads, as
-- the client counts them) go out. A range that gives other than unit rows
-- ends the call at once, its rows counted, for the client to refuse the
-- run. A seed, when given, reseeds random().
-- name: proc:loop
CREATE PROCEDURE {table}_loop(seed float8, slice_ms int, scale bigint, unit bigint, update_pct int, heavy boolean,
  hotspot int, hot_keys bigint, per_leaf bigint, height int, term int, width int,
  INOUT ops bigint, INOUT due int, INOUT updates bigint,
  INOUT reads bigint, INOUT writes bigint, INOUT nrows bigint, INOUT blocks bigint) LANGUAGE plpgsql AS $$
DECLARE
  deadline timestamptz := to_timestamp((floor(extract(epoch FROM clock_timestamp()) * 1000 / slice_ms) + 1) * slice_ms / 1000.0);
  top bigint;
  lo bigint;
  hi bigint;
  got bigint;
BEGIN
  IF seed IS NOT NULL THEN
    PERFORM setseed(seed);
  END IF;
  reads := 0; writes := 0; nrows := 0; blocks := 0;
  WHILE clock_timestamp() < deadline LOOP
    IF ops % 100 = 0 THEN
      due := update_pct;
    END IF;
    top := scale;
    IF hotspot > 0 AND (ops + 1) % hotspot = 0 THEN
      top := hot_keys;
    END IF;
    hi := unit + floor(random() * (top - unit + 1))::bigint;
    lo := hi - unit;
    IF due > 0 AND (hi % 2 = 0 OR 100 - ops % 100 <= due) THEN
      due := due - 1;
      updates := updates + 1;
      writes := writes + 1;
      got := {table}_update(lo, hi, lpad(term || ':' || updates, width, 'y'), heavy);
    ELSE
      got := {table}_read(lo, hi);
      reads := reads + 1;
    END IF;
    ops := ops + 1;
    nrows := nrows + got;
    blocks := blocks + got + height + (hi - 1) / per_leaf - lo / per_leaf;
    COMMIT;
    EXIT WHEN got <> unit;
  END LOOP;
END $$;
