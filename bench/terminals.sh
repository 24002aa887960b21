#!/usr/bin/env bash
# Benchmarks what keyed TPROC-C terminals over a pool of sessions cost
# dbrig (issue 22): 1,000 to 10,000 terminals against a PostgreSQL server
# of its own, printing peak RSS, client CPU, server sessions, efficiency,
# NOPM and TPM on both sides, and p90 response and session wait;
# bench/terminals/main.go does the work. Flags pass through:
# bench/terminals.sh --quick, --reuse DIR (build the databases once),
# --terminals 2000, --pgbouncer, --parts 4 (each point as 4 dbrig processes
# of one run, merged; issue 23), -help for the rest. The dbrig measured
# is the one in this checkout, built fresh so the figures never come from
# a stale bin/dbrig.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/terminals --dbrig "$bin/dbrig" "$@"
