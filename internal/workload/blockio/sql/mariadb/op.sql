-- A session's operations on MariaDB. Each is one transaction, so that the
-- server's Com_commit counts it as PostgreSQL counts an autocommitted
-- statement (MariaDB's count leaves those out): in sql mode a compound
-- statement sent whole, in procs mode a call of the table's procedure
-- (procs.sql). FORCE INDEX keeps every read a walk of the key index, each
-- key a lookup of its row by the primary key: one leaf page, a row's own.

-- name: read
BEGIN NOT ATOMIC
  START TRANSACTION READ ONLY;
  SELECT count(n) FROM {table} FORCE INDEX ({table}_key) WHERE `key` > $1 AND `key` <= $2;
  COMMIT;
END

-- An update's reply counts the rows its UPDATE changed. An error rolls the
-- transaction back before it reaches the client: a lock wait timeout
-- undoes only the statement that waited.
-- name: update_lite
BEGIN NOT ATOMIC
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE {table} FORCE INDEX ({table}_key) SET n = n + 1, c1 = $3 WHERE `key` > $1 AND `key` <= $2;
  COMMIT;
END

-- name: update_heavy
BEGIN NOT ATOMIC
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE {table} FORCE INDEX ({table}_key) SET n = n + 1, c1 = $3, c2 = $3, c3 = $3, c4 = $3, c5 = $3, c6 = $3, c7 = $3, c8 = $3
  WHERE `key` > $1 AND `key` <= $2;
  COMMIT;
END

-- name: call:read
CALL {table}_read($1, $2)

-- name: call:update_lite
CALL {table}_update($1, $2, $3, false)

-- name: call:update_heavy
CALL {table}_update($1, $2, $3, true)

-- Loop mode's one statement: a call of the table's loop (procs.sql), which
-- runs operations inside the database for up to $2 ms and replies with its
-- counts.
-- name: call:loop
CALL {table}_loop($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)

-- Multi-range read would sort a range's rows by primary key and read them
-- in order: not the random single-page reads the method measures.
-- name: session
SET SESSION optimizer_switch = 'mrr=off'
