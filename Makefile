# profq's developer commands. `make test` is what CI runs (with lint).
GO ?= go
PPROF_VERSION := v0.0.0-20260906184651-6331bc6350fe
STATICCHECK_VERSION := v0.8.2

.PHONY: build test test-short test-race lint bench gate-eval gate-eval-cpu golden testdata-profiles fuzz tools

build:
	$(GO) build -o profq ./cmd/profq

## PACKAGES: every package, the slowest first. go test runs two packages at once on two cores
## and starts them in the order given: started last, internal/source ran alone on one core for
## the last third of the suite; started first, the longest runs overlap and the small packages
## fill in beside them (docs/performance.md#the-test-suite).
PACKAGES := ./internal/source ./internal/cli ./internal/parity ./internal/report ./internal/symbolize ./...

## test: the whole suite: unit, golden, testscript and pprof parity tests. Every test target has
## an explicit timeout, per package: a hung test fails instead of blocking CI.
test:
	$(GO) test -count=1 -timeout 20m $(PACKAGES)

## test-short: the inner loop: the same suite under -short (large inputs and long runs sampled
## or left to `make test`), with the collector running about a quarter as often (GOGC=400: the
## tests' fixtures are garbage soon made, and the suite's CPU fell from 99-109 s to 71-78 s; each
## test process peaks below 0.9 GB). 39-59 s on a 2-core machine, idle, build cache warm; 54-61 s
## with the default GOGC (`make test`: 3 min 00 s; 2026-11-27, docs/performance.md#the-test-suite).
## Tests that measure profq's memory in a child process run it with the default GOGC.
test-short:
	GOGC=400 $(GO) test -short -count=1 -timeout 10m $(PACKAGES)

## test-race: the -short suite under the race detector (profq reads inputs, fetches URLs and
## builds graphs on several goroutines). Not part of CI's run: it takes several times as long.
## The parity tests pass under it too: a race-built test binary's profiles hold the race
## runtime's C++ names, which --symbolize none prints as recorded, as pprof does.
test-race:
	$(GO) test -race -short -count=1 -timeout 30m ./...

## lint: gofmt, go vet and staticcheck.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## bench: Go benchmarks plus profq-vs-pprof wall time and peak memory (docs/performance.md).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 60m ./...
	./scripts/bench-pprof.sh

## gate-eval: profq bench's gates on the workloads of tools/benchapps, each in a git repository
## the script makes, with and without calibrated regressions: first the variants' sizes measured
## with valgrind directly, then RUNS (default 5) profq bench runs per variant (in .bench/bencheval).
gate-eval:
	./scripts/gate-eval.sh

## gate-eval-cpu: profq diff's gate on real CPU captures under load (docs/performance.md#gate-evaluation):
## about 45 minutes of captures the first time (kept in .bench/gate), then 20 of draws.
gate-eval-cpu:
	./scripts/gate-eval-cpu.sh

## golden: regenerate golden files and testscript expectations after an intended change.
golden:
	PROFQ_UPDATE_GOLDEN=1 $(GO) test -count=1 -timeout 20m ./...

## testdata-profiles: make testdata/gen's profiles again (cpu.pb.gz, heap.pb.gz, diff/base-*, diff/new-*),
## on an idle machine, with gen's file named relative to the root (testdata/gen/main.go) so that
## profq list and pprof -list find it on any checkout. Then review the tests' expectations (make golden).
testdata-profiles:
	$(GO) run -gcflags=-trimpath=$(CURDIR) ./testdata/gen -out testdata/profiles
	$(GO) run -gcflags=-trimpath=$(CURDIR) ./testdata/gen -diff -out testdata/profiles/diff

## fuzz: run every fuzz target for FUZZTIME each (default 30s), with FUZZFLAGS (for example
## FUZZFLAGS='-parallel 1 -fuzzminimizetime 200x'). Crashers land in testdata/fuzz: keep them.
## The seed corpora (f.Add and testdata/fuzz) run as ordinary tests in `make test`.
FUZZTIME ?= 30s
FUZZFLAGS ?= -fuzzminimizetime 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -timeout 60m $(FUZZFLAGS) $$pkg || exit 1; \
	  done; \
	done

## tools: install the pprof oracle used by the parity tests and benchmarks.
tools:
	$(GO) install github.com/google/pprof@$(PPROF_VERSION)
