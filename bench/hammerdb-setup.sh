#!/usr/bin/env bash
# Assembles HammerDB 4.12 in DIR, outside this repository, for
# bench/hammerdb.sh --hammerdb DIR. HammerDB is GPL: nothing of it is
# copied into dbrig; this script only unpacks, builds and edits in DIR.
#
#   bench/hammerdb-setup.sh DIR --hammerdb-git GITDIR --pgtcl-git GITDIR
#
# GITDIR are git repositories (clones, or bare) of
# github.com/TPC-Council/HammerDB (tag v4.12) and github.com/sm-shaw/pgtclng
# (pgtcl-ng 2.1.1, the Pgtcl HammerDB 4.12 bundles). A step already done in
# DIR is skipped, so a source it does not need may be left out. The steps,
# for Debian 12 with its Tcl 8.6 and PostgreSQL headers:
#   1. HammerDB's tree from v4.12, less Build/, DocBook/ and Docker/;
#   2. apt-get install of Tcl, its Thread, tcllib and sqlite3 packages, and
#      the headers to build Pgtcl (which may upgrade Debian's PostgreSQL
#      server with them: on 2026-12-02 libpq-dev took postgresql-15 from
#      15.18 to 15.20, so figures from before and after compare two servers);
#   3. pgtcl-ng 2.1.1 built (configure; make) into DIR/lib/pgtcl2.1.1:
#      Debian's libpgtcl is not thread-safe, and HammerDB's users fail on it;
#   4. a stub ticklecharts package in DIR/lib (HammerDB's CLI requires it,
#      for charts only; Debian has none);
#   5. DIR/hammerdbcli edited to run Debian's tclsh8.6 with TCLLIBPATH=./lib
#      instead of its bundled ./bin/tclsh8.6 with LD_LIBRARY_PATH.
set -euo pipefail

usage() { echo "usage: bench/hammerdb-setup.sh DIR --hammerdb-git GITDIR --pgtcl-git GITDIR" >&2; exit 2; }
dir="" hdb_git="" pgtcl_git=""
while [ $# -gt 0 ]; do
	case "$1" in
	--hammerdb-git) [ $# -ge 2 ] || usage; hdb_git=$2; shift 2 ;;
	--pgtcl-git) [ $# -ge 2 ] || usage; pgtcl_git=$2; shift 2 ;;
	-*) usage ;;
	*) [ -z "$dir" ] || usage; dir=$1; shift ;;
	esac
done
[ -n "$dir" ] || usage
dir=$(realpath -m "$dir")
repo=$(realpath "$(dirname "$0")/..")
case "$dir/" in
"$repo"/*) echo "hammerdb-setup: $dir is inside the dbrig repository: give a directory outside it (HammerDB is never copied into dbrig)" >&2; exit 2 ;;
esac
mkdir -p "$dir"

# gitdir is the git directory of a clone or bare repository $1, for
# git --git-dir; $2 names it and $3 says where to get it when missing.
gitdir() {
	if [ -z "$1" ]; then
		echo "hammerdb-setup: $2 needed for this step: pass $3" >&2; exit 2
	fi
	if [ -d "$1/.git" ]; then echo "$1/.git"; elif git --git-dir="$1" rev-parse -q --verify HEAD >/dev/null 2>&1; then echo "$1"; else
		echo "hammerdb-setup: $1 is not a git repository of $2: pass $3" >&2; exit 2
	fi
}

# 1. HammerDB 4.12's tree.
if [ ! -f "$dir/hammerdbcli" ]; then
	g=$(gitdir "$hdb_git" "HammerDB's source" "--hammerdb-git GITDIR, a clone of https://github.com/TPC-Council/HammerDB")
	git --git-dir="$g" rev-parse -q --verify 'v4.12^{commit}' >/dev/null ||
		{ echo "hammerdb-setup: $hdb_git has no tag v4.12" >&2; exit 2; }
	echo "Unpacking HammerDB v4.12 into $dir"
	# Build/, DocBook/ and Docker/ are not needed (and Build's binaries
	# may be absent from a partial clone, for which git archive names them
	# as invalid objects and goes on).
	mapfile -t top < <(git --git-dir="$g" ls-tree --name-only v4.12 | grep -vxE 'Build|DocBook|Docker')
	git --git-dir="$g" archive v4.12 -- "${top[@]}" | tar -x -C "$dir"
fi

# 2. Debian's Tcl and what Pgtcl's build needs.
pkgs="tcl tcl-thread tcllib libsqlite3-tcl libpq-dev tcl-dev"
# shellcheck disable=SC2086
if ! dpkg -s $pkgs >/dev/null 2>&1; then
	echo "Installing $pkgs"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y $pkgs
fi

# 3. pgtcl-ng 2.1.1, from the commit of its 2.1.1 release (before its Tcl 9
# changes, which came after HammerDB 4.12).
pgtcl_commit=dcdd1336e0b006f47f8a3d95cf0d99d86844b1b5
if [ ! -f "$dir/lib/pgtcl2.1.1/pkgIndex.tcl" ]; then
	g=$(gitdir "$pgtcl_git" "pgtcl-ng's source" "--pgtcl-git GITDIR, a clone of https://github.com/sm-shaw/pgtclng")
	src=$(mktemp -d "${TMPDIR:-/tmp}/pgtclng-XXXXXX")
	trap 'rm -rf "$src"' EXIT
	git --git-dir="$g" archive "$pgtcl_commit" | tar -x -C "$src"
	echo "Building pgtcl-ng 2.1.1 in $src"
	(cd "$src" && ./configure --with-tcl=/usr/lib/tcl8.6 --with-postgres-include=/usr/include/postgresql \
		--with-postgres-lib=/usr/lib/x86_64-linux-gnu >configure.log && make >make.log) ||
		{ echo "hammerdb-setup: pgtcl-ng's build failed: see $src/configure.log and $src/make.log" >&2; trap - EXIT; exit 1; }
	mkdir -p "$dir/lib/pgtcl2.1.1"
	cp "$src/libpgtcl2.1.1.so" "$src/pkgIndex.tcl" "$dir/lib/pgtcl2.1.1/"
fi

# 4. The ticklecharts stub.
mkdir -p "$dir/lib/ticklecharts"
printf '%s\n' 'package ifneeded ticklecharts 3.2.2 [list source [file join $dir ticklecharts.tcl]]' >"$dir/lib/ticklecharts/pkgIndex.tcl"
printf '%s\n' 'namespace eval ticklecharts { variable htmlstdout "True" }' 'package provide ticklecharts 3.2.2' >"$dir/lib/ticklecharts/ticklecharts.tcl"

# 5. hammerdbcli runs Debian's tclsh8.6, finding the packages in ./lib.
sed -i -e 's|^export LD_LIBRARY_PATH="./lib:$LD_LIBRARY_PATH"$|export TCLLIBPATH="./lib"|' \
	-e 's|^exec ./bin/tclsh8.6 |exec tclsh8.6 |' "$dir/hammerdbcli"

# Check: the packages HammerDB's CLI and its PostgreSQL users load.
printf 'package require Pgtcl\npackage require Thread\npackage require ticklecharts\n' |
	TCLLIBPATH="$dir/lib" tclsh8.6 ||
	{ echo "hammerdb-setup: Pgtcl, Thread or ticklecharts does not load from $dir/lib" >&2; exit 1; }
grep -q '^exec tclsh8.6 ' "$dir/hammerdbcli" && grep -q '^export TCLLIBPATH="./lib"$' "$dir/hammerdbcli" ||
	{ echo "hammerdb-setup: $dir/hammerdbcli is not as expected: edit its two lines by hand (see this script)" >&2; exit 1; }
echo "HammerDB 4.12 is ready in $dir: bench/hammerdb.sh --hammerdb $dir"
