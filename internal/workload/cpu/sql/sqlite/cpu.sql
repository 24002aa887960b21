-- The CPU test's loop as a recursive common table expression with SQLite's
-- math functions. SQLite has no decimal type, so there is only the float
-- loop; and the integer % operator must not stand in for the remainder,
-- since it truncates both sides (and gives 875413.28).
-- The second column would be the loop's elapsed seconds by the database's
-- own clock; an embedded database has none apart from the client's, so it
-- is -1 (not measured).

-- The loop's math functions, and whether both are SQLite's own (1) or
-- application-defined (0): dbrig registers Go ones where the SQLite it was
-- built with lacks them.
-- name: functions
SELECT sqrt(4.0), floor(2.5),
  (SELECT min(builtin) FROM pragma_function_list WHERE name IN ('sqrt', 'floor'))

-- name: loop_float
WITH RECURSIVE loop(f, n) AS (
  SELECT 1, sqrt(1.0)
  UNION ALL
  SELECT f + 1, n - 999999.0 * floor(n / 999999.0) + sqrt(f + 1) FROM loop WHERE f < $1
)
SELECT printf('%.2f', n), -1.0 FROM loop WHERE f = $1
