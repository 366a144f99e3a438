# crystalball — build, test and measurement targets.
# `make test` and `make test-long` are what CI runs (.ci/run); `make test`
# must stay under 5 minutes on 2 cores, every package under 1 minute of
# the reference machine's CPU (half of TEST_BUDGET, which fails the run).
# Long runs (fuzzing, soaks, experiments at scale) have their own targets.

GO        ?= go
PKGS      := ./...
BIN       := bin/crystalball
FUZZTIME  ?= 60s
# Minimizing a new input is bounded by executions, not time: go test's
# default (60s per input) made FuzzParseTLSConfig, whose inputs are a
# certificate, a key and a CA bundle, spend its whole budget minimizing
# (5-9 executions per 20s; 12,000 a second with this bound).
FUZZMINIMIZE ?= 1000x
BENCHTIME ?= 1s

SHELL := bash

.PHONY: all build test test-long paper webtest test-times testbudget bench verify lint staticcheck purity fuzz snapshot-sweep spin-compare livecost zoo steerlive mutants mutants-gen mutants-sample realbugs soak crash clean

all: verify build test

build:
	$(GO) build -o $(BIN) ./cmd/crystalball

# `make test` is the suite CI runs, under the race detector, through
# bench/testbudget: a go test -exec wrapper records each package's test
# binary CPU time, and the report prints go test's usual lines (with CPU
# beside wall time), the failures, the costliest packages and the slowest
# tests, and fails when a package's tests use more than TEST_BUDGET of CPU
# (CPU, not wall: CI shares its machine). The budget is in seconds of the
# reference machine (the one docs/PERFORMANCE.md's figures are taken on):
# `testbudget calibrate` times a fixed CPU-bound workload under the race
# detector before the tests and again after them, and a package's CPU is
# divided by how much slower than the reference machine the slower of the
# two calibrations ran, so a slower CPU model or a busier machine does not
# fail a package that fits on the reference machine. A package over half
# the budget is named as a warning. TEST_TIMEOUT is go test's own
# per-package limit, far above the budget, so a loaded machine slows the
# suite without failing it. The figures stay in bin/ (test.json, the
# records, the calibrations, test-times.json); `make test-times` reprints
# them.
# ./... includes examples/lock, whose tests run the example program's
# emulate --json, check --json and trace show on its report, both in this
# module and built as a module of its own (go.mod replaces crystalball with
# this checkout; GOFLAGS=-mod=mod, the module cache in use).
TEST_BUDGET  ?= 2m
TEST_TIMEOUT ?= 30m
# TEST_PARALLEL is go test's -p: how many packages' test binaries run at
# once. Four on two cores, because several packages mostly wait on the
# wall clock (live nodes, their timers and processes): measured on the
# 2-vCPU EPYC with the build cached, -p 2 took 3 min 20 s (230 s of CPU),
# -p 4 2 min 51 s (254 s: a busy sibling costs each binary about 10%).
TEST_PARALLEL ?= 4
TESTBUDGET   := bin/testbudget
# The race-built testbudget calibrates under the instrumentation the
# suite's tests run with.
TESTBUDGET_RACE := bin/testbudget-race
test: purity testbudget
	@rm -f bin/test-cpu.jsonl bin/test-calibration.jsonl
	@$(TESTBUDGET_RACE) calibrate -out bin/test-calibration.jsonl
	set -o pipefail; $(GO) test -race -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -json \
	  -exec "$(CURDIR)/$(TESTBUDGET) exec -records $(CURDIR)/bin/test-cpu.jsonl" $(PKGS) 2>&1 \
	  | tee bin/test.json | $(TESTBUDGET_RACE) report -records bin/test-cpu.jsonl \
	    -calibration bin/test-calibration.jsonl -recalibrate -budget $(TEST_BUDGET) -summary bin/test-times.json

# The paper-scale tests: files named *_long_test.go, built with the tag
# `long` (experiments at their documented sizes, the long emulations and
# searches), and the quick suite again without the race detector. CI runs
# it after `make test`; its figures and duration are in docs/PERFORMANCE.md
# ("The test suite"). No budget: the report lists the costliest packages
# in both units and fails only on a failed test.
test-long: testbudget
	@rm -f bin/test-long-cpu.jsonl bin/test-long-calibration.jsonl
	@$(TESTBUDGET) calibrate -out bin/test-long-calibration.jsonl
	set -o pipefail; $(GO) test -tags long -count=1 -timeout 80m -json \
	  -exec "$(CURDIR)/$(TESTBUDGET) exec -records $(CURDIR)/bin/test-long-cpu.jsonl" $(PKGS) 2>&1 \
	  | tee bin/test-long.json | $(TESTBUDGET) report -records bin/test-long-cpu.jsonl \
	    -calibration bin/test-long-calibration.jsonl -budget 0 -top 30 -summary bin/test-long-times.json

# The experiments at the papers' documented sizes that do not fit CI's
# time (files *_paper_test.go, build tag `paper`, which also needs the long
# tests' helpers): randtree-churn, paxos, bullet-overhead, randtree-liveness
# and macemc-baseline's 8,000,000-state Chord search, each checking its
# figures in docs/RESULTS.md. Not in .ci/run: about 40 minutes of wall time
# at load 4-12 on 2 cores (docs/PERFORMANCE.md, "The test suite", has the last run).
PAPER_TIMEOUT ?= 3h
paper: testbudget
	@rm -f bin/test-paper-cpu.jsonl bin/test-paper-calibration.jsonl
	@$(TESTBUDGET) calibrate -out bin/test-paper-calibration.jsonl
	set -o pipefail; $(GO) test -tags long,paper -count=1 -timeout $(PAPER_TIMEOUT) -run 'Documented$$' -json \
	  -exec "$(CURDIR)/$(TESTBUDGET) exec -records $(CURDIR)/bin/test-paper-cpu.jsonl" ./experiments 2>&1 \
	  | tee bin/test-paper.json | $(TESTBUDGET) report -records bin/test-paper-cpu.jsonl \
	    -calibration bin/test-paper-calibration.jsonl -budget 0 -summary bin/test-paper-times.json

# The web view in a real browser: files built with the tag `browser`
# (cli/internal/tool/serve_browser_test.go) drive headless Chromium through chromedp —
# the page loads, steps through a report, shows the diff against the
# nearest live path; a node's /ui page updates. CHROMIUM is the browser (Debian's package chromium;
# .ci/run installs it when it is missing). About 5 s.
CHROMIUM ?= /usr/bin/chromium
webtest:
	@test -x $(CHROMIUM) || { echo "webtest: no browser at $(CHROMIUM) (apt-get install -y chromium, or set CHROMIUM)"; exit 1; }
	CHROMIUM=$(CHROMIUM) $(GO) test -tags browser -race -count=1 -run 'Browser' ./cli/internal/tool

# Reprints the last `make test`'s report (and checks its budget again)
# from the files it left in bin/.
test-times: testbudget
	$(TESTBUDGET) report -records bin/test-cpu.jsonl -calibration bin/test-calibration.jsonl -budget $(TEST_BUDGET) -top 40 -top-packages 40 < bin/test.json

testbudget:
	@mkdir -p bin
	$(GO) build -o $(TESTBUDGET) ./bench/testbudget
	$(GO) build -race -o $(TESTBUDGET_RACE) ./bench/testbudget

# The deterministic cores must not reach the network: none of them may
# depend (even indirectly) on package net, on memberlist or on zap (whose
# package imports net/http). The live shell (package live) is where those
# belong. CORE lists every core package; a new service package is checked
# by the ./services/... pattern. The bug zoo's services, the services
# written from the README (examples/permits, commit, mutex, and their
# scripts' staleview) and the etcd raft store (examples/etcdraft/kv) are
# cores too (the zoo package, examples/newcomer, their commands and the
# example's main serve them through cli).
ZOO_SERVICES := ./examples/etcdraft/kv ./examples/elect ./examples/leaserace ./examples/permits ./examples/commit ./examples/mutex ./examples/internal/staleview ./examples/zoo/cache ./examples/zoo/lease ./examples/zoo/lockd ./examples/zoo/logship ./examples/zoo/meter ./examples/zoo/retry ./examples/zoo/follower ./examples/zoo/register
CORE := ./node ./node/layer ./node/nodetest ./node/replayed ./node/linearizable ./snapshot ./consequence/... ./steering ./emulation ./report ./services/... $(ZOO_SERVICES)
purity:
	@bad=$$($(GO) list -deps $(CORE) | grep -xE 'net|github.com/hashicorp/memberlist|go.uber.org/zap' || true); \
	if [ -n "$$bad" ]; then \
	  echo "purity: a core package depends on the network:"; echo "$$bad"; \
	  for p in $$($(GO) list $(CORE)); do \
	    for d in $$bad; do $(GO) list -deps $$p | grep -qx "$$d" && echo "  $$p -> $$d"; done; \
	  done; exit 1; fi; echo "purity: core packages import no net, memberlist or zap"

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

# staticcheck (honnef.co/go/tools), pinned by tools/go.mod (its tool line)
# and tools/go.sum: a module of its own, so the library's users never
# inherit the linter's requirements, built into bin/ from the module cache
# (no network once the module is there). It and go vet also read the files
# behind the test tags (LINT_TAGS: the paper-scale tests and the browser
# test). A finding that is wrong gets `//lint:ignore CHECK reason` on the
# line above it, as the msgpack as_array markers do (see node.Message).
STATICCHECK := bin/staticcheck
LINT_TAGS   := long,paper,browser
staticcheck:
	@mkdir -p bin
	$(GO) build -C tools -o $(CURDIR)/$(STATICCHECK) honnef.co/go/tools/cmd/staticcheck

lint: staticcheck
	$(STATICCHECK) -tags $(LINT_TAGS) $(PKGS)

# What CI checks before the tests (.ci/run): purity, staticcheck, gofmt,
# go vet, and go.mod/go.sum (the module's and tools/') left as they are
# by go mod tidy.
verify: purity lint
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(LINT_TAGS) $(PKGS)
	$(GO) mod tidy -diff
	$(GO) -C tools mod tidy -diff

# Runs every fuzz target for FUZZTIME each (go test accepts one -fuzz target
# per package per invocation).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE); \
	  done; \
	done

# The snapshot consistency checker over more seeds than `make test` runs
# (SEEDS per scenario; each seed adds about 3,600 checked snapshots).
SEEDS ?= 20
snapshot-sweep:
	SNAPSHOT_SEEDS=$(SEEDS) $(GO) test -count=1 -run TestSnapshotsAreConsistent -v -timeout 30m ./snapshot/

# SPIN on the same two-phase-commit specification as consequence/twophase
# (bench/spin/twophase.pml; docs/PERFORMANCE.md, "The explorer against SPIN at every size, rounds, and the live cost"), side by side
# with our CLI and in-process benchmark on one core, size by size, run in
# turn, with the ratios. Needs spin (Debian's package) and a C compiler;
# not part of `make test`; 6 to 10 RMs take about 10 minutes (SPIN alone
# spends 3.5 of them on 2PC-10, with 3 GB). SPIN_RMS: numbers of resource
# managers; SPIN_VARIANTS: SPIN's compile variants to tabulate first
# (noreduce por collapse hc4 claim; none by default).
SPIN_RMS ?= 6 7 8 9 10
SPIN_VARIANTS ?=
spin-compare:
	@command -v spin >/dev/null 2>&1 || { echo "spin-compare: spin is not installed; on Debian or Ubuntu: apt-get install spin" >&2; exit 1; }
	ONLY="$(SPIN_VARIANTS)" bench/spin/run.sh $(SPIN_RMS)

# The live runtime's own cost (bench/livecost; docs/PERFORMANCE.md, "Issue
# 33"): a live 5-node MaceTransport cluster in one process over loopback
# TCP, a message per node every 10 ms, run plain, with snapshots and the
# immediate check, and with --mode steer --immediate, in rotating phases
# (LIVECOST_ROUNDS of 20 s each); prints CPU per event, p50/p99 handled-
# event latency and bytes on the wire per event, and the ratios to plain.
# Not part of `make test` (its test, a short run, is). About 4 minutes.
LIVECOST_ROUNDS ?= 3
LIVECOST_FLAGS ?=
livecost:
	$(GO) run ./bench/livecost --rounds $(LIVECOST_ROUNDS) $(LIVECOST_FLAGS)

# The bug zoo's scoreboard (examples/zoo/scoreboard): deep online debugging
# and steering on every case, planted bug and fixed twin, for ZOO_SEEDS;
# ZOO_FLAGS adds flags (e.g. --cases retry,lease --json). Not part of
# `make test`: a full board takes hours on 2 cores (docs/RESULTS.md, "The bug
# zoo"): start with ZOO_FLAGS="--cases cache,retry".
ZOO_SEEDS ?= 1,2,3
ZOO_FLAGS ?=
zoo:
	$(GO) run ./examples/zoo/cmd/zoo-scoreboard --seeds $(ZOO_SEEDS) $(ZOO_FLAGS)

# What steering costs the liveness of services, and what it prevents
# (bench/steerlive; docs/RESULTS.md, "Steering and liveness on services
# written from the README"): every target of --services (default: the
# newcomer's permits, bug and twin on 3 nodes, commit, bug and twin, and
# mutex, and examples/lock, on 5) with every seed of STEERLIVE_SEEDS, off,
# with the immediate check and with steering plus the check, 10 minutes of
# virtual time under churn 1/m and breaks 2/m; prints a table per target
# and one JSON line of totals. STEERLIVE_FLAGS adds flags (--services,
# --duration, --steer-flags "..."). Not part of `make test` (its test, one
# short run, is): the baseline's 216 runs took 9 minutes of wall time and
# 323 s of CPU on 2 cores at load 9-12.
STEERLIVE_SEEDS ?= 1-12
STEERLIVE_FLAGS ?=
steerlive:
	$(GO) run ./bench/steerlive --seeds $(STEERLIVE_SEEDS) $(STEERLIVE_FLAGS)

# The mutation corpus (bench/mutants): mutants-gen selects
# MUTANTS_PER_OP mutants per service and operator with MUTANTS_SEED and
# builds bin/mutants/run with them compiled in (a mutant schema through go
# build -overlay); `mutants` scores the whole corpus (an offline check
# confirmed in the emulator, then off, debug and steer runs per mutant, MUTANTS_SEEDS each, MUTANTS_JOBS processes; 1-2
# hours on 2 quiet cores, or a subset under an hour with
# MUTANTS_FLAGS=--services=S1,S2: the papers' six services took 45
# minutes in one process), `mutants-sample` a fixed sample (3 mutants of every service, in
# about 10 minutes on 2 quiet cores). Both print the table and, last, one
# JSON line with the totals; the board is in bin/mutants/*.json and the
# plot of prediction-to-violation times in bin/mutants/*.svg.
MUTANTS_SEED   ?= 1
MUTANTS_PER_OP ?= 4
MUTANTS_SEEDS  ?= 1
MUTANTS_JOBS   ?= 2
MUTANTS_FLAGS  ?=
mutants-gen:
	$(GO) run ./bench/mutants gen --out bin/mutants --seed $(MUTANTS_SEED) --per-op $(MUTANTS_PER_OP)
mutants: mutants-gen
	bin/mutants/run run --sample all --seeds $(MUTANTS_SEEDS) --jobs $(MUTANTS_JOBS) --json bin/mutants/all.json --svg bin/mutants/all.svg $(MUTANTS_FLAGS)
mutants-sample: mutants-gen
	bin/mutants/run run --sample sample --seeds $(MUTANTS_SEEDS) --jobs $(MUTANTS_JOBS) --json bin/mutants/sample.json --svg bin/mutants/sample.svg $(MUTANTS_FLAGS)

# The library's own historical bugs (bench/realbugs): eight fixes of
# go.etcd.io/raft put back by reverse patches applied to a copy of the
# module from the module cache, each confirmed by the library's
# regression test, then scored by check, emulate (seeds REALBUGS_SEEDS)
# and online debugging and steering, beside the unmodified library as
# the control (docs/RESULTS.md, "The library's own bugs"; 15 to 20
# minutes on 2 cores). The last line is one JSON object of totals;
# the whole board goes to bin/realbugs.json.
REALBUGS_SEEDS ?= 1-10
REALBUGS_FLAGS ?=
realbugs:
	@mkdir -p bin
	$(GO) run ./bench/realbugs --seeds $(REALBUGS_SEEDS) --json bin/realbugs.json $(REALBUGS_FLAGS)

# The live soak (bench/soak): 25 `crystalball node` processes on loopback
# (ports 21001.., 22001.., 31001..) for SOAK_DURATION under SIGKILL churn and
# a hostile peer (both audits' attacks), with --mode steer --immediate
# (steering's holds bounded: --filter-hold 10s --veto-hold 1m; RandTree's
# bug 3 corrected, --fix root-siblings: bench/soak/doc.go), then a quiet
# phase in which the tree must re-form; fails on a panic, a failed-gather
# streak, unbounded memory, goroutines or files, a poisoned checkpoint
# number, or a tree that never re-forms; each sample's tree states go to
# trail.txt. Not part of `make test` (docs/PERFORMANCE.md, "The soak").
SOAK_DURATION ?= 30m
SOAK_FLAGS ?=
soak: build
	$(GO) run ./bench/soak --bin $(BIN) --duration $(SOAK_DURATION) $(SOAK_FLAGS)

# The crash test (bench/crash): Paxos and RandTree clusters of CRASH_NODES
# `crystalball node` processes on their data directories, SIGKILLed all or
# in part CRASH_CYCLES times (at settled and at random moments) and
# restarted; fails if a learned value changes, an acceptor breaks a
# promise, or a cluster does not converge again. Its short form
# (TestCrashShort) is in `make test`; the figures are in docs/RESULTS.md.
CRASH_CYCLES ?= 50
CRASH_NODES  ?= 3
CRASH_SEED   ?= 1
CRASH_FLAGS  ?=
crash: build
	$(GO) run ./bench/crash --bin $(BIN) --cycles $(CRASH_CYCLES) --nodes $(CRASH_NODES) --seed $(CRASH_SEED) $(CRASH_FLAGS)

clean:
	rm -rf bin
