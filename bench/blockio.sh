#!/usr/bin/env bash
# Measures block-io's own client cost: dbrig's CPU per 1,000 logical reads
# in procs and sql modes, against pgbench doing the same range reads, and
# in loop mode (the sessions loop inside the database; pgbench has no
# match), with each client's CPU as a share of one core and the reads/s
# it drove, in one run on a PostgreSQL server of its own;
# bench/blockio/main.go does the work. Flags pass through:
# bench/blockio.sh --pairs 5, --duration 30s, --vus 8, --modes procs,loop,
# --target URL, --socket, --json FILE, -help for the rest. About 6 minutes
# with the defaults (3 pairs of 20 s runs: procs and sql with pgbench
# beside each, and loop).
#
# Needs, beyond Go: the PostgreSQL server binaries (postgres, initdb,
# pg_ctl) and pgbench, which Debian ships together in postgresql-15 (the
# one beside postgres is used; --pgbench picks another). The dbrig measured
# is the one in this checkout, built fresh so the figures never come from
# a stale bin/dbrig.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/blockio --dbrig "$bin/dbrig" "$@"
