#!/usr/bin/env bash
# A/B of two dbrig clients against pgbench: runs bench/tprocc (one round of
# its client rounds: procs mode at 4 VUs and pgbench -M prepared -j 1 on the
# same functions, on a server of its own) with binary A and binary B in turn,
# A B B A A B ..., and prints each run's client CPU per transaction as a
# whole process next to pgbench's in the same run, and NOPM. Each run's ratio is taken within the run, as bench/tprocc's is; the
# turns spread the machine's drift over both sides.
#
#   bench/clientab.sh [--pairs N] A B [bench/tprocc flags]
#
# A and B are dbrig binaries, or git revisions, which are built into a temp
# dir. The tprocc flags default to --skip-raw --skip-sql --vus-high 0
# --client-rounds 1 --rampup 2s --duration 20s; more flags are appended (a
# later one wins).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=3
if [[ ${1:-} == --pairs ]]; then
	pairs=$2
	shift 2
fi
if [[ $# -lt 2 || ! $pairs =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: bench/clientab.sh [--pairs N] A B [bench/tprocc flags], A and B dbrig binaries or git revisions" >&2
	exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbrig-clientab-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# binary makes $2/dbrig from $1: a file as it is, else a git revision.
binary() {
	mkdir -p "$2"
	if [[ -f $1 ]]; then
		cp "$1" "$2/dbrig"
		return
	fi
	git worktree add -q --detach "$2/src" "$1"
	(cd "$2/src" && go build -o "$2/dbrig" ./cmd/dbrig)
	git worktree remove --force "$2/src"
}
binary "$1" "$tmp/a"
binary "$2" "$tmp/b"
names=("$1" "$2")
shift 2
go build -o "$tmp/tprocc" ./bench/tprocc

printf 'run\tclient\tNOPM\tclient µs/tx\tpgbench µs/tx\tratio\n' >"$tmp/table"
run=0
for ((p = 1; p <= pairs; p++)); do
	order=(a b)
	if ((p % 2 == 0)); then order=(b a); fi
	for side in "${order[@]}"; do
		run=$((run + 1))
		name=${names[0]}
		if [[ $side == b ]]; then name=${names[1]}; fi
		echo "== run $run: $side ($name)"
		"$tmp/tprocc" --dbrig "$tmp/$side/dbrig" --skip-raw --skip-sql --vus-high 0 \
			--client-rounds 1 --rampup 2s --duration 20s "$@" --json "$tmp/run.json" >"$tmp/run.log" 2>&1 ||
			{ cat "$tmp/run.log"; exit 1; }
		jq -r --arg run "$run" --arg side "$side" \
			'.client_rounds[0] as $c |
			 [$run, $side, ($c.dbrig.nopm | round), ($c.dbrig_us_per_tx * 10 | round / 10),
			  ($c.pgbench_j1.client_us_per_tx * 10 | round / 10),
			  ($c.dbrig_us_per_tx / $c.pgbench_j1.client_us_per_tx * 100 | round / 100)] | @tsv' \
			"$tmp/run.json" | tee -a "$tmp/table"
	done
done
echo
echo "a = ${names[0]}, b = ${names[1]}; ratio = client CPU per transaction as a whole process, procs / pgbench -j 1, in the same run"
column -t -s $'\t' "$tmp/table"
