#!/usr/bin/env bash
# Benchmarks how dbrig's TPROC-C build scales: 4, 16, 48 and 100 warehouses
# on a PostgreSQL server of its own, each in a database dropped before the
# next, printing wall time, rows/s, MB/s, dbrig's and the server's CPU and
# dbrig's peak RSS, with the time a warehouse beside 4's; bench/build/main.go
# does the work. Flags pass through: bench/build.sh --warehouses 1,4,
# --loaders 4, --json FILE, -help for the rest. The dbrig measured is the
# one in this checkout, built fresh so the figures never come from a stale
# bin/dbrig.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/build --dbrig "$bin/dbrig" "$@"
