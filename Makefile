# make test is the one test command: the README names it and .ci/run calls it.
GO ?= go
# mattn/go-sqlite3 leaves SQLite's math functions (sqrt, floor) out unless
# told; the CPU test's loop needs them. Without the tag dbrig registers Go
# ones in their place, which work but are slower. The pure-Go SQLite has
# them anyway.
TAGS ?= sqlite_math_functions

.PHONY: test fuzz build static image bench vet

# The first step runs every package's tests with the tag. The second
# builds without cgo, as Go does on a machine with no C compiler, and runs
# the SQLite tests on the pure-Go SQLite that stands in: the driver's, the
# workloads' and the commands' whole cycle (build, run, check, report, a
# build on a full disk), not the commands' other features again (sweeps,
# live metrics, keyed terminals, how a run ends: signals, error rates,
# where its result goes, bounds, ...), which the first step tests and
# which do not depend on the driver. Beside it, the third builds as `go
# run` does, without the tag, and runs the CPU test's loop on the math
# functions registered from Go.
#
# The tests mostly wait on servers and timers, not on the CPU: two
# packages and two parallel tests at a time (Go's default on 2 CPUs) kept
# this machine's 2 CPUs about half busy, so the first step runs four of
# each (TEST_PARALLEL). Its longest package, internal/cli, runs beside the
# others (three at a time) from the start, and the second and third steps
# start once the others are done, while it still runs (more at once than that, internal/
# cli's tests in two processes say, overloaded the 2 CPUs, and tests that
# time what a server does failed). Ctrl-C stops every step at once (the
# trap: a step started in the background would ignore it).
TEST_PARALLEL ?= 4
TESTING = $(GO) test -count=1 -timeout 20m
SQLITE_SKIP = TestSweep|TestMixedRun|TestLiveMetrics|TestMetricsAddrInUse|TestKeyedTerminals|TestForceKeepsUsersTable|TestConnections|TestSteady|TestTelemetry|TestOtherSessions|TestSIGTERM|TestFullDiskSQLite|TestResultFallback|TestOutputRefused|TestHugeCounts|$(TPROCC_SQLITE_SKIP)|$(CPU_SQLITE_SKIP)
# tproc-c's own SQLite tests beyond its transactions and its durability
# audit (check's corruptions, the pooled run, repeated order lines) test
# the workload, not the driver: on the pure-Go SQLite they built a
# warehouse each, the step's longest part.
TPROCC_SQLITE_SKIP = TestCheckSQLite$$|TestPooledRunSQLite|TestNewOrderRepeatedLinesSQLite
# The CPU test's commands run its loop twice on the pure-Go SQLite, the
# CPU-bound part of the step, where the workload's own test (TestCPUSQLite)
# already runs it on that driver.
CPU_SQLITE_SKIP = TestCPUSQLiteCommands
# The packages whose tests take longest start first (go test runs them in
# the order given), so that none of them starts late and runs on alone,
# one test at a time, while the CPUs it leaves are idle: tproc-c's, the
# longest, last in path order, ended 200-400 s after the others did.
LONGEST = ./internal/workload/tprocc ./internal/workload/cpu ./internal/workload/blockio ./internal/server/postgres \
	./internal/dbtarget/postgres ./internal/workload/dvdstore ./internal/server/mariadb ./internal/report ./internal/driver
test:
	@trap 'kill 0' INT TERM; \
	$(TESTING) -tags $(TAGS) -parallel $(TEST_PARALLEL) ./internal/cli/ & cli=$$!; \
	s=0; $(TESTING) -tags $(TAGS) -p $$(($(TEST_PARALLEL) - 1)) -parallel $(TEST_PARALLEL) \
		$$($(GO) list $(LONGEST)) $$($(GO) list ./... | grep -vxF -e "$$($(GO) list ./internal/cli $(LONGEST))") || s=1; \
	CGO_ENABLED=0 $(TESTING) -run 'SQLite|Tampered' -skip '$(SQLITE_SKIP)' \
		./internal/dbtarget/sqlite/ ./internal/workload/tprocc/ ./internal/workload/cpu/ ./internal/cli/ & pure=$$!; \
	$(TESTING) -run 'MathFunctionsSQLite|CPUSQLite/float' ./internal/dbtarget/sqlite/ ./internal/workload/cpu/ || s=1; \
	wait $$pure || s=1; wait $$cli || s=1; exit $$s

# The fuzzers, as package:Fuzzer. make test replays their seeds and what
# they found (each package's testdata/fuzz); make fuzz searches further, each
# for FUZZTIME in turn, with FUZZPARALLEL workers (one core by default).
FUZZERS = ./internal/experiment:FuzzParse ./internal/dbtarget:FuzzRedact \
	./internal/dbtarget:FuzzRedactString ./internal/dbtarget/mariadb:FuzzConfig \
	./internal/workload:FuzzParseSQL ./internal/result:FuzzRead \
	./internal/web:FuzzEscapes ./internal/catalog/foreign:FuzzIndex
FUZZTIME ?= 60s
FUZZPARALLEL ?= 1

fuzz:
	@set -e; for f in $(FUZZERS); do \
		echo "$${f#*:} ($${f%%:*}), $(FUZZTIME)"; \
		$(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$${f#*:}\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) "$${f%%:*}"; \
	done

build:
	$(GO) build -tags $(TAGS) -o bin/dbrig ./cmd/dbrig

# The binary of the container image (deploy/Dockerfile runs this target):
# static, without cgo, so SQLite is the pure-Go one and no tag applies.
static:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o bin/dbrig-static ./cmd/dbrig

# The container image, for deploy/kubernetes/ (needs a Docker daemon with
# BuildKit). IMAGE=REGISTRY/dbrig:TAG names it for a push.
IMAGE ?= dbrig:latest
image:
	docker build -f deploy/Dockerfile -t $(IMAGE) .

vet:
	gofmt -l $$(git ls-files '*.go')
	$(GO) vet -tags $(TAGS) ./...

bench:
	bench/tprocc.sh
