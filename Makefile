# make test is the one test command: the README names it and .ci/run calls it.
GO ?= go
# mattn/go-sqlite3 leaves SQLite's math functions (sqrt, floor) out unless
# told; the CPU test's loop needs them. Without the tag dbrig registers Go
# ones in their place, which work but are slower. The pure-Go SQLite has
# them anyway.
TAGS ?= sqlite_math_functions

.PHONY: test fuzz build static image bench vet

# The second line builds without cgo, as Go does on a machine with no C
# compiler, and runs the SQLite tests on the pure-Go SQLite that stands in:
# the driver's, the workloads' and the commands' whole cycle (build, run,
# check, report, a build on a full disk), not the commands' other features
# again (sweeps, live metrics, keyed terminals, how a run ends: signals,
# error rates, where its result goes, bounds, ...), which the first line
# tests and which do not depend on the driver.
# The third builds as `go run` does, without the tag, and runs the CPU
# test's loop on the math functions registered from Go.
#
# The tests mostly wait on servers and timers, not on the CPU: two
# packages and two parallel tests at a time (Go's default on 2 CPUs) kept
# this machine's 2 CPUs about half busy, so the first line runs four of
# each (TEST_PARALLEL).
TEST_PARALLEL ?= 4
test:
	$(GO) test -tags $(TAGS) -count=1 -timeout 20m -p $(TEST_PARALLEL) -parallel $(TEST_PARALLEL) ./...
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m -run 'SQLite|Tampered' \
		-skip 'TestSweep|TestMixedRun|TestLiveMetrics|TestMetricsAddrInUse|TestKeyedTerminals|TestForceKeepsUsersTable|TestConnections|TestSteady|TestTelemetry|TestOtherSessions|TestSIGTERM|TestFullDiskSQLite|TestResultFallback|TestOutputRefused|TestHugeCounts' \
		./internal/dbtarget/sqlite/ ./internal/workload/tprocc/ ./internal/workload/cpu/ ./internal/cli/
	$(GO) test -count=1 -timeout 10m -run 'MathFunctionsSQLite|CPUSQLite/float' ./internal/dbtarget/sqlite/ ./internal/workload/cpu/

# The fuzzers, as package:Fuzzer. make test replays their seeds and what
# they found (each package's testdata/fuzz); make fuzz searches further, each
# for FUZZTIME in turn, with FUZZPARALLEL workers (one core by default).
FUZZERS = ./internal/experiment:FuzzParse ./internal/dbtarget:FuzzRedact \
	./internal/dbtarget:FuzzRedactString ./internal/dbtarget/mariadb:FuzzConfig \
	./internal/workload:FuzzParseSQL ./internal/result:FuzzRead
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
