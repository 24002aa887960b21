# make test is the one test command: the README names it and .ci/run calls it.
GO ?= go

.PHONY: test build bench vet

test:
	$(GO) test -count=1 -timeout 20m ./...

build:
	$(GO) build -o bin/dbrig ./cmd/dbrig

vet:
	gofmt -l $$(git ls-files '*.go')
	$(GO) vet ./...

bench:
	bench/tprocc.sh
