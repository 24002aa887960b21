#!/usr/bin/env bash
# A/B of tproc-c's PostgreSQL functions: server CPU and WAL bytes per
# New-Order and NOPM, alternating runs of two versions of procs.sql on one
# server of its own, each run on a fresh copy of the database as built;
# bench/procsab/main.go does the work. Each side is a file or a git
# revision: bench/procsab.sh --a 8c7634b --b . --pairs 3 [--statements].
# With --build each side's database is built by the dbrig of its revision,
# to measure a change to the schema: bench/procsab.sh --build --a HEAD --b .
# The dbrig that runs them is the one in this checkout, built fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/procsab --dbrig "$bin/dbrig" "$@"
