#!/usr/bin/env bash
# Benchmarks dbrig's TPROC-C on a PostgreSQL server of its own and prints the
# figures (build vs raw COPY, NOPM, client CPU); bench/tprocc/main.go does the
# work. Flags pass through: bench/tprocc.sh --quick, --socket, --json FILE,
# -help for the rest. The dbrig measured is the one in this checkout, built
# fresh so the figures never come from a stale bin/dbrig.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/tprocc --dbrig "$bin/dbrig" "$@"
