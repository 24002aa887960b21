#!/usr/bin/env bash
# Measures block-io's own client cost: dbrig's CPU per 1,000 logical reads
# in procs and sql modes, against pgbench doing the same range reads, in
# one run on a PostgreSQL server of its own; bench/blockio/main.go does the
# work. Flags pass through: bench/blockio.sh --pairs 5, --duration 30s,
# --target URL, --socket, --json FILE, -help for the rest. About 5 minutes
# with the defaults (3 pairs of 20 s runs in each mode).
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
