#!/usr/bin/env bash
# A/B of tproc-c's PostgreSQL functions: server CPU per New-Order and NOPM,
# alternating runs of two versions of procs.sql on one server of its own;
# bench/procsab/main.go does the work. Each side is a file or a git
# revision: bench/procsab.sh --a 8c7634b --b . --pairs 3 [--statements].
# The dbrig that runs them is the one in this checkout, built fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/procsab --dbrig "$bin/dbrig" "$@"
