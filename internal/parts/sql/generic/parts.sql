-- The barrier where a split run's parts meet (see internal/parts): a row
-- per run name, and a row per part that joined the run that row holds.
-- Instants are the server's clock in microseconds since 1970, in bigint,
-- so that no dialect's time type is involved. A dialect's parts.sql
-- replaces the blocks it writes differently, and must give now_us.

-- state: idle (just made), gathering, started or failed. created_us is
-- when the leader took the row, deadline_us when the gathering fails;
-- start_us, open_us, close_us and hold_us are the schedule, fixed as the
-- run starts.
-- name: create
CREATE TABLE IF NOT EXISTS dbrig_part_runs (
  name varchar(100) NOT NULL PRIMARY KEY,
  run_id varchar(36) NOT NULL,
  parts int NOT NULL,
  state varchar(10) NOT NULL,
  leader int NOT NULL,
  seed bigint NOT NULL,
  config text NOT NULL,
  config_sha256 varchar(64) NOT NULL,
  created_us bigint NOT NULL,
  deadline_us bigint NOT NULL,
  start_us bigint NOT NULL,
  open_us bigint NOT NULL,
  close_us bigint NOT NULL,
  hold_us bigint NOT NULL,
  reason text NOT NULL);
CREATE TABLE IF NOT EXISTS dbrig_part_members (
  run_id varchar(36) NOT NULL,
  part int NOT NULL,
  host varchar(255) NOT NULL,
  pid int NOT NULL,
  joined_us bigint NOT NULL,
  ready_us bigint NOT NULL,
  offset_us bigint NOT NULL,
  rtt_us bigint NOT NULL,
  PRIMARY KEY (run_id, part));

-- The run row, made idle if there is none; an existing one is left as it is.
-- name: insert_run
INSERT INTO dbrig_part_runs (name, run_id, parts, state, leader, seed, config, config_sha256,
  created_us, deadline_us, start_us, open_us, close_us, hold_us, reason)
VALUES ($1, '', 0, 'idle', 0, 0, '', '', 0, 0, 0, 0, 0, 0, '')
ON CONFLICT (name) DO NOTHING

-- name: begin
BEGIN

-- name: commit
COMMIT

-- name: rollback
ROLLBACK

-- name: lock_run
SELECT run_id, parts, state, leader, seed, config, config_sha256, created_us, deadline_us,
  start_us, open_us, close_us, hold_us, reason
  FROM dbrig_part_runs WHERE name = $1 FOR UPDATE

-- name: read_run
SELECT run_id, parts, state, leader, seed, config, config_sha256, created_us, deadline_us,
  start_us, open_us, close_us, hold_us, reason
  FROM dbrig_part_runs WHERE name = $1

-- A new leader takes the row for a new run: $2 run id, $3 parts, $4 the
-- leader's part, $5 seed, $6 config, $7 its hash, $8 now, $9 the deadline.
-- name: reset_run
UPDATE dbrig_part_runs SET run_id = $2, parts = $3, state = 'gathering', leader = $4, seed = $5,
  config = $6, config_sha256 = $7, created_us = $8, deadline_us = $9,
  start_us = 0, open_us = 0, close_us = 0, hold_us = 0, reason = ''
 WHERE name = $1

-- The members of the run a new leader replaces.
-- name: forget_members
DELETE FROM dbrig_part_members WHERE run_id = $1

-- name: insert_member
INSERT INTO dbrig_part_members (run_id, part, host, pid, joined_us, ready_us, offset_us, rtt_us)
VALUES ($1, $2, $3, $4, $5, 0, 0, 0)

-- name: members
SELECT part, host, pid, joined_us, ready_us, offset_us, rtt_us
  FROM dbrig_part_members WHERE run_id = $1 ORDER BY part

-- $3 now, $4 the offset, $5 the round trip it was measured over.
-- name: set_ready
UPDATE dbrig_part_members SET ready_us = $3, offset_us = $4, rtt_us = $5
 WHERE run_id = $1 AND part = $2

-- The schedule, fixed by the leader while the run is still gathering.
-- name: start_run
UPDATE dbrig_part_runs SET state = 'started', start_us = $3, open_us = $4, close_us = $5, hold_us = $6
 WHERE name = $1 AND run_id = $2 AND state = 'gathering'

-- Failing a gathering run: the first reason written is the one kept.
-- name: fail_run
UPDATE dbrig_part_runs SET state = 'failed', reason = $3
 WHERE name = $1 AND run_id = $2 AND state = 'gathering'

-- For `dbrig drop`: the runs, then the barrier's tables, which a split
-- run leaves behind (see Drop).
-- name: runs
SELECT name FROM dbrig_part_runs

-- name: drop
DROP TABLE IF EXISTS dbrig_part_members, dbrig_part_runs
