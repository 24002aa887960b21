# make test is the one test command: the README names it and .ci/run calls it.
GO ?= go
# mattn/go-sqlite3 leaves SQLite's math functions (sqrt, floor) out unless
# told; the CPU test's loop needs them. The pure-Go SQLite has them anyway.
TAGS ?= sqlite_math_functions

.PHONY: test build bench vet

# The second line builds without cgo, as Go does on a machine with no C
# compiler, and runs the SQLite tests on the pure-Go SQLite that stands in.
test:
	$(GO) test -tags $(TAGS) -count=1 -timeout 20m ./...
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m -run 'SQLite|Tampered' ./internal/target/sqlite/ ./internal/workload/tprocc/ ./internal/workload/cpu/ ./internal/cli/

build:
	$(GO) build -tags $(TAGS) -o bin/dbrig ./cmd/dbrig

vet:
	gofmt -l $$(git ls-files '*.go')
	$(GO) vet -tags $(TAGS) ./...

bench:
	bench/tprocc.sh
