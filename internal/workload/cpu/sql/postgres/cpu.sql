-- The CPU test's loop as PL/pgSQL, in temporary functions each session
-- makes for itself, so the test needs no schema and leaves nothing behind.
-- Each returns the result printed to two decimals and the loop's own
-- elapsed seconds by the server's clock.

-- name: setup:numeric
CREATE FUNCTION pg_temp.dbrig_cpu_numeric(loops integer, OUT result text, OUT seconds float8)
LANGUAGE plpgsql AS $fn$
DECLARE
  n numeric := 0;
  began timestamptz := clock_timestamp();
BEGIN
  -- Decimal arithmetic throughout, as Oracle's NUMBER does.
  FOR f IN 1..loops LOOP
    n := mod(n, 999999) + sqrt(f::numeric);
  END LOOP;
  result := round(n, 2)::text;
  seconds := extract(epoch FROM clock_timestamp() - began);
END
$fn$

-- name: setup:float
CREATE FUNCTION pg_temp.dbrig_cpu_float(loops integer, OUT result text, OUT seconds float8)
LANGUAGE plpgsql AS $fn$
DECLARE
  n float8 := 0;
  began timestamptz := clock_timestamp();
BEGIN
  -- PostgreSQL has no mod(float8, integer): the remainder is written out.
  FOR f IN 1..loops LOOP
    n := n - 999999 * floor(n / 999999) + sqrt(f::float8);
  END LOOP;
  result := round(n::numeric, 2)::text;
  seconds := extract(epoch FROM clock_timestamp() - began);
END
$fn$

-- name: loop_numeric
SELECT result, seconds FROM pg_temp.dbrig_cpu_numeric($1)

-- name: loop_float
SELECT result, seconds FROM pg_temp.dbrig_cpu_float($1)
