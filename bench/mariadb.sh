#!/usr/bin/env bash
# Measures dbrig's TPROC-C sql mode against procs mode on a MariaDB server
# of its own, in alternating pairs in one run, and prints NOPM and CPU per
# transaction with their ratios; bench/mariadb/main.go does the work. Flags
# pass through: --pairs N, --duration D, --vus N, --warehouses N, --json
# FILE, -help for the rest. The dbrig measured is the one in this
# checkout, built fresh so the figures never come from a stale bin/dbrig.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/mariadb --dbrig "$bin/dbrig" "$@"
