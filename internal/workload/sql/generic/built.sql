-- dbrig_built is dbrig's record of what each workload's build made on a
-- database: a row per table (or routine) of the workload's names, written
-- before the build makes it (workload.Make). dbrig drops only what it
-- lists, so a table of the same name that dbrig did not build is never
-- dropped.

-- name: create
CREATE TABLE IF NOT EXISTS dbrig_built (workload varchar(64) NOT NULL, name varchar(128) NOT NULL,
  PRIMARY KEY (workload, name))

-- name: list
SELECT name FROM dbrig_built WHERE workload = $1

-- name: add
INSERT INTO dbrig_built (workload, name) VALUES ($1, $2)

-- name: forget
DELETE FROM dbrig_built WHERE workload = $1

-- name: left
SELECT count(*) FROM dbrig_built

-- name: drop
DROP TABLE dbrig_built
