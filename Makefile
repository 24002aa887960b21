# make test is the one test command: the README names it and .ci/run calls it.
GO ?= go

.PHONY: test build bench vet

# The second line builds without cgo, as Go does on a machine with no C
# compiler, and runs the SQLite tests on the pure-Go SQLite that stands in.
test:
	$(GO) test -count=1 -timeout 20m ./...
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m -run 'SQLite' ./internal/target/sqlite/ ./internal/workload/tprocc/ ./internal/cli/

build:
	$(GO) build -o bin/dbrig ./cmd/dbrig

vet:
	gofmt -l $$(git ls-files '*.go')
	$(GO) vet ./...

bench:
	bench/tprocc.sh
