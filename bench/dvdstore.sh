#!/usr/bin/env bash
# Measures `dbrig build dvd-store` (--size M unless told) against a raw
# binary COPY of the same tables on a PostgreSQL server of its own, and
# prints the ratio; bench/dvdstore/main.go does the work. Flags pass
# through: --size S, --pairs N, --target URL --copy-dir DIR, -help for the
# rest. The dbrig measured is the one in this checkout, built fresh so the
# figures never come from a stale bin/dbrig.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-bench-bin-XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dbrig" ./cmd/dbrig
go run ./bench/dvdstore --dbrig "$bin/dbrig" "$@"
