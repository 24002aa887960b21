#!/usr/bin/env bash
# Measures dbrig's TPROC-C beside HammerDB 4.12's TPC-C on PostgreSQL, each
# on a server of its own, in pairs of runs that alternate which goes
# first; bench/hammerdb/main.go does the work. HammerDB is GPL and never
# copied into dbrig: assemble it outside the repository with
# bench/hammerdb-setup.sh DIR, then pass --hammerdb DIR. Flags pass
# through: --pairs 3, --duration 1m, --warmup 1m (0 for none), --json
# FILE, -help for the rest.
# The dbrig measured is the one in this checkout, built fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
# Built, not go run, so that its exit code (2 for bad input) comes through.
go build -o "$bin/hammerdb" ./bench/hammerdb
"$bin/hammerdb" --dbrig "$bin/dbrig" "$@"
